"""Creating experiments: a question set, protocols, debaters and a judge panel, each run in both answer orders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from batches.panel import BatchError, Contestant, Rules, check, check_budget, given, named, save_snapshots
from chaoslm.sharing import Visibility
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


def _check(
    questions: Sequence[EvidenceQuestion],
    protocols: Sequence[str],
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    options: dict[str, Any],
    concurrency: int,
    visibility: str,
) -> int:
    if not questions:
        raise ExperimentError("An experiment needs at least one question.")
    if not protocols:
        raise ExperimentError("An experiment needs at least one protocol.")
    unknown = [p for p in protocols if p not in design.PROTOCOLS]
    if unknown:
        raise ExperimentError(f"There is no protocol {unknown[0]!r}; the protocols are {', '.join(design.PROTOCOLS)}.")
    if len(set(protocols)) != len(protocols):
        raise ExperimentError("Each protocol may be named once.")
    if design.NEEDS_DEBATERS & set(protocols) and not debaters:
        raise ExperimentError("A debate or a consultancy needs at least one debater.")
    if design.DEBATE in protocols and len(debaters) < 2:
        raise ExperimentError("An evidence debate needs two debaters: a persona does not argue against itself.")
    check(RULES, debaters, judges, options, OPTIONS, concurrency, visibility)
    size = design.count(len(questions), list(protocols), len(debaters), len(judges))
    if size > MAX_RUNS:
        raise ExperimentError(f"That is {size} runs; an experiment makes at most {MAX_RUNS}.")
    return size


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
    name = named(RULES, name)
    options = given(options)
    protocols = list(protocols)
    _check(questions, protocols, debaters, judges, options, concurrency, visibility)
    size = design.estimate(len(questions), protocols, len(debaters), len(judges), options)
    check_budget(owner, size.calls, [*debaters, *judges])
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
