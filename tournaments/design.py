"""A tournament's shape, pure: which matches it holds and how many debates and LLM calls it will make."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from debates.formats import DEFAULT_FORMAT, LISTED, get_format


@dataclass(frozen=True)
class Pairing:
    question: int  # index into the questions
    debater_for: int  # index into the debaters
    debater_against: int


def pairings(questions: int, debaters: int, sides: str) -> list[Pairing]:
    """Every match, question by question. `both`: each pair on each side; `once`: each pair once, the FOR
    side alternating between the pair's members from one question to the next so neither always opens."""
    out: list[Pairing] = []
    pairs = list(combinations(range(debaters), 2))
    for q in range(questions):
        for k, (i, j) in enumerate(pairs):
            if sides == "both":
                out.append(Pairing(q, i, j))
                out.append(Pairing(q, j, i))
            elif (q + k) % 2 == 0:
                out.append(Pairing(q, i, j))
            else:
                out.append(Pairing(q, j, i))
    return out


DEFAULT = DEFAULT_FORMAT


def formats() -> tuple[str, ...]:
    """The formats a tournament runs: every listed format with exactly two sides and a judge replay to judge it
    (the first of them, the default, first)."""
    names = [name for name, f in LISTED.items() if len(f.sides) == 2 and f.replayed_by]
    return tuple(sorted(names, key=lambda name: name != DEFAULT))


def silent_side(name: str, options: Mapping[str, Any]) -> str:
    """Why a match of this format at these options would leave a side silent (and its judges would score a side
    that never spoke), or ""."""
    return get_format(name).silent_side(options)


def debate_calls(name: str, options: Mapping[str, Any]) -> int:
    """A match's own LLM calls (its judge's too, when one sits inside it)."""
    return get_format(name).calls(options)


def replay_calls(name: str, options: Mapping[str, Any]) -> int:
    """One judge replay's LLM calls over a match of this format: it reads the match's public statements."""
    fmt = get_format(name)
    return get_format(fmt.replayed_by).calls({"turns": fmt.statements(options)})


def judged_in_debate(name: str) -> bool:
    """Whether the first judge sits in the match's debate (a duel's judge); else every judgment is a replay."""
    return get_format(name).judging == "in_debate"


@dataclass(frozen=True)
class Estimate:
    matches: int
    replays: int
    calls: int
    formats: tuple[str, ...] = (DEFAULT,)

    @property
    def debates(self) -> int:
        return self.matches + self.replays

    def sentence(self) -> str:
        plural = "s" if self.matches != 1 else ""
        if len(self.formats) == 1:
            kind = get_format(self.formats[0]).noun + plural
        else:
            kind = f"{' and '.join(self.formats)} debate{plural}"
        return (
            f"{self.matches} {kind} and {self.replays} judge "
            f"replay{'s' if self.replays != 1 else ''}: {self.debates} debates, {self.calls} LLM calls."
        )


def estimate(
    questions: int,
    debaters: int,
    judges: int,
    sides: str,
    repeats: int,
    options: dict[str, int] | int,
    formats: tuple[str, ...] = (DEFAULT,),
) -> Estimate:
    """`options`: the formats' options (the turns alone, as a number, for a tournament of the default format)."""
    options = {"turns": options} if isinstance(options, int) else options
    pairings_count = questions * (debaters * (debaters - 1) // 2) * (2 if sides == "both" else 1)
    matches = replays = calls = 0
    for name in formats:
        own = max(judges * repeats - (1 if judged_in_debate(name) else 0), 0)
        matches += pairings_count
        replays += pairings_count * own
        calls += pairings_count * (debate_calls(name, options) + own * replay_calls(name, options))
    return Estimate(matches, replays, calls, tuple(formats))
