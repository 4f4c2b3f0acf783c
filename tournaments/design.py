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


# The two-sided formats a tournament runs; the duel is the default, and the only one with a judge inside.
FORMATS = ("duel", "classic", "structured")
DUEL = "duel"


def duel_calls(turns: int) -> int:
    """A judged duel's LLM calls: two plans, a think and a statement a turn, the judge's evaluation and
    score a turn, and the verdict's four calls (the duel's ordinals 1 ... 4T+6)."""
    return 4 * turns + 6


def replay_calls(turns: int) -> int:
    """A judge-only replay: an evaluation and a score a turn, then the four verdict calls."""
    return 2 * turns + 4


def statements(format_name: str, options: dict[str, int]) -> int:
    """How many public statements its two debaters make (what a judge's replay reads), at the options' values
    (the formats' defaults where they say nothing): a duel's turns; a classic debate's openings, rebuttals,
    free turns and summaries; a structured debate's openings, rebuttals, questions and answers, and closings."""
    if format_name == "classic":
        return 6 + options.get("free_turns", 4)
    if format_name == "structured":
        return 6 + 4 * options.get("questions", 1)
    return options.get("turns", 6)


def debate_calls(format_name: str, options: dict[str, int]) -> int:
    """A match's own LLM calls: a judged duel's; a classic debate's moderator and debater turns (four moderator
    slots besides the debaters'); a structured debate's two preparations besides its statements."""
    if format_name == "classic":
        return statements("classic", options) + 4
    if format_name == "structured":
        return statements("structured", options) + 2
    return duel_calls(statements(DUEL, options))


def judged_in_debate(format_name: str) -> bool:
    """Whether the first judge sits in the match's debate (a duel's judge); else every judgment is a replay."""
    return format_name == DUEL


@dataclass(frozen=True)
class Estimate:
    matches: int
    replays: int
    calls: int
    formats: tuple[str, ...] = (DUEL,)

    @property
    def debates(self) -> int:
        return self.matches + self.replays

    def sentence(self) -> str:
        plural = "s" if self.matches != 1 else ""
        kind = f"duel{plural}" if self.formats == (DUEL,) else f"{' and '.join(self.formats)} debate{plural}"
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
    formats: tuple[str, ...] = (DUEL,),
) -> Estimate:
    """`options`: the formats' options (a duel's turns alone, as a number, for a duel-only tournament)."""
    options = {"turns": options} if isinstance(options, int) else options
    pairings_count = questions * (debaters * (debaters - 1) // 2) * (2 if sides == "both" else 1)
    matches = replays = calls = 0
    for name in formats:
        own = max(judges * repeats - (1 if judged_in_debate(name) else 0), 0)
        matches += pairings_count
        replays += pairings_count * own
        calls += pairings_count * (debate_calls(name, options) + own * replay_calls(statements(name, options)))
    return Estimate(matches, replays, calls, tuple(formats))
