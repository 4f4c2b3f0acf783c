"""A tournament's shape, pure: which matches it holds and how many debates and LLM calls it will make."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations


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


# A tournament's duels need both sides to speak: A opens, B answers. With one turn only the FOR side would
# speak, and the judge would score a side that never spoke.
MIN_TURNS = 2
TOO_FEW_TURNS = (
    f"A duel needs both sides to speak: turns must be at least {MIN_TURNS} "
    "(with 1, only the FOR side speaks, and the judge would score a silent side)."
)


def duel_calls(turns: int) -> int:
    """A judged duel's LLM calls: two plans, a think and a statement a turn, the judge's evaluation and
    score a turn, and the verdict's four calls (the duel's ordinals 1 ... 4T+6)."""
    return 4 * turns + 6


def replay_calls(turns: int) -> int:
    """A judge-only replay: an evaluation and a score a turn, then the four verdict calls."""
    return 2 * turns + 4


@dataclass(frozen=True)
class Estimate:
    matches: int
    replays: int
    calls: int

    @property
    def debates(self) -> int:
        return self.matches + self.replays

    def sentence(self) -> str:
        return (
            f"{self.matches} duel{'s' if self.matches != 1 else ''} and {self.replays} judge "
            f"replay{'s' if self.replays != 1 else ''}: {self.debates} debates, {self.calls} LLM calls."
        )


def estimate(questions: int, debaters: int, judges: int, sides: str, repeats: int, turns: int) -> Estimate:
    matches = questions * (debaters * (debaters - 1) // 2) * (2 if sides == "both" else 1)
    replays = matches * max(judges * repeats - 1, 0)
    return Estimate(matches, replays, matches * duel_calls(turns) + replays * replay_calls(turns))
