"""Which runs an experiment makes, as a pure function of its size. No Django.

For each question, protocol and judge, every run is made in both answer orders, so a judge's position bias
is measured (the two runs differ only in the order it reads the answers), not baked into the results:

- evidence debate: every ordered pair of different debaters, the
  first arguing answer 0 and the second answer 1; so each debater argues the correct answer and the
  incorrect one equally often;
- consultancy: every debater as the consultant, arguing answer 0 and answer 1: the correct one in exactly
  half of a question's runs;
- blind and oracle: the judge alone.

A panel judges one debate: a debate's run before the first judge holds the debate, and the same run before
each other judge reads its transcript (`source`: a judge-only replay of it). A consultancy is not shared:
the judge's questions shape it, so each judge holds its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypeVar

from debates.formats import get_format
from debates.formats.evidence import ROUNDS, Blind, Consultancy, EvidenceDebate, Oracle

# The protocols an experiment compares are the evidence formats, by their names.
DEBATE, CONSULTANCY, BLIND, ORACLE = EvidenceDebate.name, Consultancy.name, Blind.name, Oracle.name
PROTOCOLS = (DEBATE, CONSULTANCY, BLIND, ORACLE)
NEEDS_DEBATERS = frozenset({DEBATE, CONSULTANCY})
T = TypeVar("T")


@dataclass(frozen=True)
class RunPlan:
    question: int
    protocol: str
    judge: int
    swapped: bool
    first: int | None = None  # the debater arguing answer 0 (a debate), or the consultant
    second: int | None = None  # the debater arguing answer 1 (a debate)
    assigned: int | None = None  # the answer the consultant argues
    source: int | None = None  # the index of the run whose debate this run's judge reads again, if any

    @property
    def pair(self) -> tuple[object, ...]:
        """What the run's twin in the other answer order shares with it: everything but the order."""
        return (self.question, self.protocol, self.judge, self.first, self.second, self.assigned)


def debated(protocol: str) -> bool:
    """Whether two debaters argue its runs, each one of the two answers (its format's two sides)."""
    return len(get_format(protocol).sides) == 2


def consulted(protocol: str) -> bool:
    """Whether one debater argues its runs, for an answer it is assigned (a consultancy)."""
    return bool(get_format(protocol).assigned_answer_option)


def speakers(protocol: str, debaters: int) -> list[tuple[int | None, int | None, int | None]]:
    """(first, second, assigned) for each arrangement of speakers a protocol makes from `debaters` debaters."""
    if debated(protocol):
        # A debate needs two different debaters (a debate's seats are different personas).
        return [(i, j, None) for i in range(debaters) for j in range(debaters) if i != j]
    if consulted(protocol):
        return [(k, None, s) for k in range(debaters) for s in (0, 1)]
    return [(None, None, None)]


def runs(questions: int, protocols: list[str], debaters: int, judges: int) -> list[RunPlan]:
    """Every run, a question's together (so a cancelled experiment has whole questions), both orders adjacent;
    a debate's runs before the panel's other judges name the first judge's run as their source."""
    plans = [
        RunPlan(q, protocol, judge, swapped, first, second, assigned)
        for q in range(questions)
        for protocol in protocols
        for first, second, assigned in speakers(protocol, debaters)
        for judge in range(judges)
        for swapped in (False, True)
    ]
    held: dict[tuple[object, ...], int] = {}
    for index, plan in enumerate(plans):
        if not debated(plan.protocol):
            continue
        debate = (plan.question, plan.first, plan.second, plan.swapped)
        if plan.judge == 0:
            held[debate] = index
        else:
            plans[index] = replace(plan, source=held[debate])
    return plans


def count(questions: int, protocols: list[str], debaters: int, judges: int) -> int:
    return questions * judges * 2 * sum(len(speakers(p, debaters)) for p in protocols)


def seats(first: T, second: T, swapped: bool) -> tuple[T, T]:
    """The debaters at seats a (argues the answer shown as A) and b: `first` argues answer 0, `second` answer 1."""
    return (second, first) if swapped else (first, second)


def shown(answers: tuple[str, str] | list[str], swapped: bool) -> list[str]:
    """The answers in the order the run presents them: A first."""
    return [answers[1], answers[0]] if swapped else [answers[0], answers[1]]


def letter_of(answer: int, swapped: bool) -> int:
    """Where the question's answer `answer` (0 or 1) is shown: 0 as A, 1 as B."""
    return 1 - answer if swapped else answer


def planned_calls(protocol: str, options: dict[str, int], replay: bool) -> int:
    """The model calls a run makes when every judge's answer reads the first time (an unreadable one is asked
    once more, a call the plan does not count): what a batch's ETA counts its pace in.

    - a judge-only replay of another run's debate (`replay`): the judge's answer;
    - evidence debate: each debater's notes, a speech a round each, the judge's answer: 2R + 3;
    - consultancy: the consultant's notes, a speech a round, the judge's question after each speech but the
      last (asked even when it answers NO QUESTION), the judge's answer: 2R + 1;
    - blind and oracle: the judge's answer.
    """
    if replay:
        return 1
    rounds = options.get("rounds", ROUNDS.default)
    if debated(protocol):
        return 2 + 2 * rounds + 1
    if consulted(protocol):
        return 1 + rounds + (rounds - 1) + 1
    return 1


@dataclass(frozen=True)
class Estimate:
    """An experiment's size before it starts, for its form: runs (each its own debate), how many of them are a
    judge rereading another run's debate, and the model calls they plan (`planned_calls`)."""

    runs: int
    replays: int
    calls: int

    @property
    def debates(self) -> int:
        """What runs as a debate (every run: a judge's replay is one too), as every batch's estimate counts them."""
        return self.runs

    def sentence(self) -> str:
        replays = f", {self.replays} of them a judge rereading another run's debate" if self.replays else ""
        return f"{self.runs} debate{'s' if self.runs != 1 else ''}{replays}: {self.calls} LLM calls."


def estimate(questions: int, protocols: list[str], debaters: int, judges: int, options: dict[str, int]) -> Estimate:
    """What `runs` would make, counted without listing them: every arrangement of speakers in both orders, for each
    judge; a debate is held once, before the first judge, and replayed (one call) before each other judge."""
    runs = replays = calls = 0
    for protocol in protocols:
        arranged = questions * len(speakers(protocol, debaters)) * 2 * judges
        runs += arranged
        if debated(protocol) and judges:
            held = arranged // judges
            replays += arranged - held
            calls += held * planned_calls(protocol, options, replay=False) + (arranged - held)
        else:
            calls += arranged * planned_calls(protocol, options, replay=False)
    return Estimate(runs, replays, calls)
