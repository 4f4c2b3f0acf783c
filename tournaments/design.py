"""A tournament's shape, pure: which matches it holds and how many debates and LLM calls it will make."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Any

from debates.formats import DEFAULT_FORMAT, LISTED, Format, get_format
from debates.formats.sides_judge import SidesJudge


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


@dataclass(frozen=True)
class Seating:
    """A match of a format of more than two sides: one entrant per side, in the format's side order."""

    question: int
    debaters: tuple[int, ...]  # indexes into the debaters, one per side


def seatings(questions: int, debaters: int, teams: int, sides: str) -> list[Seating]:
    """Every match of a format of `teams` sides, question by question: each set of `teams` debaters, seated in
    each of its rotations (`both`), or once, the rotation moving on from one question to the next so no entrant
    always takes the same side (`once`)."""
    out: list[Seating] = []
    groups = list(combinations(range(debaters), teams))
    for q in range(questions):
        for k, group in enumerate(groups):
            turns = range(teams) if sides == "both" else [(q + k) % teams]
            out.extend(Seating(q, group[r:] + group[:r]) for r in turns)
    return out


def matches_per_question(fmt: Format, debaters: int, sides: str) -> int:
    teams = len(fmt.sides)
    groups = comb(debaters, teams)
    return groups * (teams if sides == "both" else 1) if teams > 2 else groups * (2 if sides == "both" else 1)


def pairwise(ranking: Sequence[int]) -> list[tuple[int, int]]:
    """A ranking of N sides (side indexes, best first) as the N(N-1)/2 results it implies: (winner, loser)."""
    return [(ranking[i], ranking[j]) for i in range(len(ranking)) for j in range(i + 1, len(ranking))]


DEFAULT = DEFAULT_FORMAT


def runs(fmt: Format) -> bool:
    """Whether a tournament runs this format: its matches seat one entrant on each of two sides, or on each of more
    teams when the judge inside ranks them (its ranking counts as the pairwise results it implies)."""
    return len(fmt.sides) == 2 or (fmt.ranks_teams() and fmt.judging == "in_debate" and fmt.judge_seat is not None)


def formats() -> tuple[str, ...]:
    """The built-in formats a tournament runs (the default first); a person's tournament may also run the protocol
    cards they may use that `runs` (tournaments/services.py `offered_formats`)."""
    names = [name for name, f in LISTED.items() if runs(f)]
    return tuple(sorted(names, key=lambda name: name != DEFAULT))


def _format(fmt: Format | str) -> Format:
    return fmt if isinstance(fmt, Format) else get_format(fmt)


def replay_format(fmt: Format | str) -> Format:
    """The judge replay that judges a match of this format again: its own, else the replay of any two sides."""
    return get_format(_format(fmt).replayed_by or SidesJudge.name)


def silent_side(fmt: Format | str, options: Mapping[str, Any]) -> str:
    """Why a match of this format at these options would leave a side silent (and its judges would score a side
    that never spoke), or ""."""
    return _format(fmt).silent_side(options)


def debate_calls(fmt: Format | str, options: Mapping[str, Any]) -> int:
    """A match's own LLM calls (its judge's too, when one sits inside it)."""
    return _format(fmt).calls(options)


def replay_calls(fmt: Format | str, options: Mapping[str, Any]) -> int:
    """One judge replay's LLM calls over a match of this format: it reads the match's public statements."""
    return replay_format(fmt).calls({"turns": _format(fmt).statements(options)})


def judged_in_debate(fmt: Format | str) -> bool:
    """Whether the first judge sits in the match's debate (a duel's judge, a panel's first referee); else every
    judgment is a replay."""
    return _format(fmt).judging in ("in_debate", "referees")


def refereed(fmt: Format | str) -> bool:
    """Whether the match's debate is decided by the panel's judges sitting in it as referees, each naming a side:
    their decision is the match's one verdict (no replays)."""
    return _format(fmt).judging == "referees"


@dataclass(frozen=True)
class Estimate:
    matches: int
    replays: int
    calls: int
    formats: tuple[str, ...] = (DEFAULT,)
    noun: str = ""  # one match's debate, with a single format ("duel")

    @property
    def debates(self) -> int:
        return self.matches + self.replays

    def sentence(self) -> str:
        plural = "s" if self.matches != 1 else ""
        kind = self.noun + plural if self.noun else f"{' and '.join(self.formats)} debate{plural}"
        return (
            f"{self.matches} {kind} and {self.replays} judge "
            f"replay{'s' if self.replays != 1 else ''}: {self.debates} debate{'s' if self.debates != 1 else ''}, "
            f"{self.calls} LLM call{'s' if self.calls != 1 else ''}."
        )


def estimate(
    questions: int,
    debaters: int,
    judges: int,
    sides: str,
    repeats: int,
    options: dict[str, int] | int,
    formats: Sequence[Format | str] = (DEFAULT,),
) -> Estimate:
    """`options`: the formats' options (the turns alone, as a number, for a tournament of the default format);
    `formats`: by name (a built-in) or as formats (a card's)."""
    options = {"turns": options} if isinstance(options, int) else options
    chosen = [_format(f) for f in formats]
    matches = replays = calls = 0
    for fmt in chosen:
        pairings_count = questions * matches_per_question(fmt, debaters, sides)
        # A ranking of teams has no replay: its one judge sits inside (tournaments/services.py refuses more); nor
        # has a debate its referees decide: every judge sits inside.
        inside = fmt.ranks_teams() or refereed(fmt)
        own = 0 if inside else max(judges * repeats - (1 if judged_in_debate(fmt) else 0), 0)
        matches += pairings_count
        replays += pairings_count * own
        calls += pairings_count * (debate_calls(fmt, options) + own * replay_calls(fmt, options))
    noun = chosen[0].noun if len(chosen) == 1 else ""
    return Estimate(matches, replays, calls, tuple(f.name for f in chosen), noun)
