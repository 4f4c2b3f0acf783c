"""Creating experiments: a question set, protocols, debaters and a judge panel, each run in both answer orders."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from batches.checks import (
    BatchError,
    Checks,
    Contestant,
    Rules,
    check,
    check_budget,
    cost_estimate,
    given,
    named,
    save_snapshots,
)
from chaoslm import costs
from chaoslm.sharing import Visibility
from debates import estimates
from debates.formats.evidence import ROUNDS, SIMULTANEOUS, WORD_LIMIT
from experiments import design
from experiments.models import Experiment, Participant, Question, Run
from experiments.questions import EvidenceQuestion

MAX_DEBATERS = 10
MAX_JUDGES = 10
MAX_RUNS = 20_000
OPTIONS = {o.name: o for o in (ROUNDS, WORD_LIMIT, SIMULTANEOUS)}


class ExperimentError(BatchError):
    """An experiment that cannot be made as asked; the message is for the user."""


RULES = Rules(
    noun="An experiment", max_debaters=MAX_DEBATERS, max_judges=MAX_JUDGES, debaters_do="argue", error=ExperimentError
)


@dataclass(frozen=True)
class Checked:
    """An experiment as `check_experiment` found it: its name and options as stored, and its size."""

    name: str
    options: dict[str, Any]
    size: design.Estimate
    cost: costs.CostRange  # what its calls would cost, low to high, as the new form says
    time: estimates.Duration  # how long its calls take, as the new form says


def check_experiment(
    *,
    name: str,
    questions: Sequence[EvidenceQuestion],
    protocols: Sequence[str],
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    options: dict[str, Any] | None = None,
    concurrency: int = 8,
    owner: Any = None,
    visibility: str = Visibility.PRIVATE,
    arena: bool = False,
) -> Checked:
    """The checks `create_experiment` makes before anything is saved (its arguments; the owner and the arena
    change none), and the size they find: ExperimentError with every problem at once."""
    found = Checks(ExperimentError)
    name = named(found, RULES, name)
    options = given(options)
    if not questions:
        found.fail("An experiment needs at least one question.", "questions")
    if not protocols:
        found.fail("An experiment needs at least one protocol.", "protocols")
    unknown = [p for p in protocols if p not in design.PROTOCOLS]
    if unknown:
        found.fail(
            f"There is no protocol {unknown[0]!r}; the protocols are {', '.join(design.PROTOCOLS)}.", "protocols"
        )
    if len(set(protocols)) != len(protocols):
        found.fail("Each protocol may be named once.", "protocols")
    if design.NEEDS_DEBATERS & set(protocols) and not debaters:
        found.fail("A debate or a consultancy needs at least one debater.", "debaters", "protocols")
    elif design.DEBATE in protocols and len(debaters) < 2:
        found.fail(
            "An evidence debate needs two debaters: a persona does not argue against itself.", "debaters", "protocols"
        )
    check(found, RULES, debaters, judges, options, OPTIONS, concurrency, visibility)
    found.done()
    runs = design.count(len(questions), list(protocols), len(debaters), len(judges))
    if runs > MAX_RUNS:
        raise ExperimentError(f"That is {runs} runs; an experiment makes at most {MAX_RUNS}.")
    size = design.estimate(len(questions), list(protocols), len(debaters), len(judges), options)
    time = estimates.duration(size.calls, size.calls, size.runs, concurrency)
    return Checked(name, options, size, cost_estimate(size.calls, [*debaters, *judges]), time)


def create_experiment(
    *,
    name: str,
    questions: Sequence[EvidenceQuestion],
    protocols: Sequence[str],
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    options: dict[str, Any] | None = None,
    concurrency: int = 8,
    owner: Any = None,
    visibility: str = Visibility.PRIVATE,
    arena: bool = False,
) -> Experiment:
    """Store an experiment with all its runs (nothing runs yet: see `work.EXPERIMENT.start`)."""
    protocols = list(protocols)
    checked = check_experiment(
        name=name,
        questions=questions,
        protocols=protocols,
        debaters=debaters,
        judges=judges,
        options=options,
        concurrency=concurrency,
        visibility=visibility,
    )
    name, options = checked.name, checked.options
    check_budget(owner, checked.cost)
    if design.NEEDS_DEBATERS.isdisjoint(protocols):
        debaters = []  # nobody argues: no debaters to keep
    with transaction.atomic():
        experiment = Experiment.objects.create(
            name=name,
            owner=owner,
            protocols=protocols,
            options=options,
            concurrency=concurrency,
            visibility=visibility,
            arena=arena,
        )
        people = save_snapshots(Participant, debaters, judges, experiment=experiment)
        saved = Question.objects.bulk_create(
            [
                Question(
                    experiment=experiment,
                    index=i,
                    passage=q.passage,
                    question=q.question,
                    answers=list(q.answers),
                    correct=q.correct,
                )
                for i, q in enumerate(questions)
            ]
        )
        debater_rows = people[Participant.Role.DEBATER]
        plans = design.runs(len(questions), protocols, len(debaters), len(judges))
        rows = Run.objects.bulk_create(
            [
                Run(
                    experiment=experiment,
                    order=order,
                    question=saved[plan.question],
                    protocol=plan.protocol,
                    swapped=plan.swapped,
                    judge=people[Participant.Role.JUDGE][plan.judge],
                    first=debater_rows[plan.first] if plan.first is not None else None,
                    second=debater_rows[plan.second] if plan.second is not None else None,
                    assigned=plan.assigned,
                )
                for order, plan in enumerate(plans)
            ],
            batch_size=2000,
        )
        replays = []
        for row, plan in zip(rows, plans, strict=True):
            if plan.source is not None:
                row.source = rows[plan.source]
                replays.append(row)
        Run.objects.bulk_update(replays, ["source"], batch_size=2000)
    return experiment
