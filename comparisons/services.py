"""Creating comparisons: a question set with known answers, run under each arm, one debate a question and arm."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from batches.checks import MAX_CONCURRENCY, BatchError, Checks, check_budget, cost_estimate
from chaoslm import costs
from chaoslm.sharing import Visibility
from comparisons.arms import Arm, ArmRequest, resolve
from comparisons.models import Comparison, Question, Run
from comparisons.question_sets import LETTERS, GoldQuestion
from debates import estimates
from debates.models import Debate

MAX_RUNS = 40_000
MAX_NAME = 200
TOPIC_LIMIT = Debate._meta.get_field("topic").max_length


class ComparisonError(BatchError):
    """A comparison that cannot be made as asked: `problems` lists every one, each on its spec key (the message
    joins them)."""


def material_of(question: GoldQuestion | Question) -> str:
    """What a card reads as {material}: the question's material, then its choices lettered ("A. ...")."""
    choices = "\n".join(f"{letter}. {text}" for letter, text in zip(LETTERS, question.choices, strict=False))
    return "\n\n".join(part for part in (question.material, choices) if part)


@dataclass(frozen=True)
class Estimate:
    """What a comparison will make: runs, calls from fewest to most (a stop condition may end a debate early),
    their cost range (from the fewest calls at the cheapest price to the most at the dearest), and the time they
    take."""

    runs: int
    fewest_calls: int
    calls: int
    cost: costs.CostRange
    time: estimates.Duration

    @property
    def debates(self) -> int:
        """One a run, as every batch's estimate counts them."""
        return self.runs

    @property
    def calls_text(self) -> str:
        """ "114 to 144", or "3" when the fewest are the most."""
        return str(self.calls) if self.fewest_calls == self.calls else f"{self.fewest_calls} to {self.calls}"

    def sentence(self) -> str:
        """What the new form says of it, in plain words (the API's `sentence`)."""
        runs = f"{self.runs} debate{'s' if self.runs != 1 else ''}"
        return f"{runs} making {self.calls_text} model calls. {self.time.sentence()}"


def estimate(questions: int, arms: Sequence[Arm], concurrency: int) -> Estimate:
    """The size of a comparison of `questions` under `arms`, `concurrency` debates at once: what the form, the
    command line and the API all say of it before it starts."""
    fewest = sum(arm.calls()[0] for arm in arms) * questions
    most = sum(arm.calls()[1] for arm in arms) * questions
    people = [c for arm in arms for c in arm.seats.values()]
    low, high = cost_estimate(fewest, people), cost_estimate(most, people)
    cost = costs.CostRange(low.low, high.high, high.unknown, most)
    runs = questions * len(arms)
    return Estimate(runs, fewest, most, cost, estimates.duration(fewest, most, runs, concurrency))


@dataclass(frozen=True)
class Checked:
    """A comparison as `check_comparison` found it: its name as stored, its arms resolved and its size, nothing
    saved."""

    name: str
    arms: list[Arm]
    size: Estimate

    @property
    def cost(self) -> costs.CostRange:
        """What its calls would cost, low to high, as the new form says (the command line prints it)."""
        return self.size.cost

    @property
    def time(self) -> estimates.Duration:
        return self.size.time


def check_comparison(
    *,
    name: str,
    questions: Sequence[GoldQuestion],
    arms: Sequence[ArmRequest],
    concurrency: int = 8,
    owner: Any = None,
    visibility: str = Visibility.PRIVATE,
) -> Checked:
    """The checks `create_comparison` makes before anything is saved, and the size they find: ComparisonError with
    every problem at once, each on its spec key. The owner decides which cards an arm may name."""
    found = Checks(ComparisonError)
    name = name.strip()
    if not name:
        found.fail("The comparison needs a name.", "name")
    if not questions:
        # Not told when the sample's count, difficulty or seed was refused: the questions were never drawn.
        found.fail("A comparison needs at least one question.", "questions", "count", "difficulty", "seed")
    long = [q.id for q in questions if len(q.question.strip()) > TOPIC_LIMIT]
    if long:
        found.fail(
            f"A question may be at most {TOPIC_LIMIT} characters (a debate's topic); longer: {', '.join(long[:10])}"
            + (f" and {len(long) - 10} more" if len(long) > 10 else "")
            + ". Put the passage in its material.",
            "questions",
        )
    resolved = resolve(owner, arms, found)
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        found.fail(f"Concurrency must be between 1 and {MAX_CONCURRENCY}.", "concurrency")
    if visibility not in Visibility.values:
        found.fail("Visibility must be private, unlisted or public.", "visibility")
    size = len(questions) * len(arms)
    if size > MAX_RUNS:
        found.fail(f"That is {size} runs; a comparison makes at most {MAX_RUNS}.", "questions", "arms")
    found.done()
    return Checked(name[:MAX_NAME], resolved, estimate(len(questions), resolved, concurrency))


def create_comparison(
    *,
    name: str,
    questions: Sequence[GoldQuestion],
    arms: Sequence[ArmRequest],
    concurrency: int = 8,
    owner: Any = None,
    visibility: str = Visibility.PRIVATE,
) -> Comparison:
    """Store a comparison with all its runs, question by question, each under every arm (nothing runs yet:
    `kind.COMPARISON.start`). OverBudget when the most it may cost passes what the owner's budget has left."""
    checked = check_comparison(
        name=name, questions=questions, arms=arms, concurrency=concurrency, owner=owner, visibility=visibility
    )
    name, resolved = checked.name, checked.arms
    check_budget(owner, checked.cost)
    with transaction.atomic():
        comparison = Comparison.objects.create(
            name=name,
            owner=owner,
            arms=[arm.stored() for arm in resolved],
            concurrency=concurrency,
            visibility=visibility,
        )
        saved = Question.objects.bulk_create(
            [
                Question(
                    comparison=comparison,
                    index=i,
                    ident=q.id,
                    kind=q.kind,
                    question=q.question.strip(),
                    choices=list(q.choices),
                    answer=q.answer,
                    material=q.material,
                )
                for i, q in enumerate(questions)
            ],
            batch_size=2000,
        )
        Run.objects.bulk_create(
            [
                Run(comparison=comparison, order=i * len(resolved) + a, question=question, arm=a)
                for i, question in enumerate(saved)
                for a in range(len(resolved))
            ],
            batch_size=2000,
        )
    return comparison
