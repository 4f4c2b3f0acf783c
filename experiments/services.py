"""Creating experiments: a question set, protocols, debaters and a judge panel, each run in both answer orders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from chaoslm.sharing import Visibility
from debates.formats.evidence import ROUNDS, SIMULTANEOUS, WORD_LIMIT
from experiments import design, work
from experiments.models import Experiment, Participant, Question, Run
from experiments.questions import EvidenceQuestion
from tournaments import batches
from tournaments import design as tournament_design
from tournaments.services import Contestant, save_snapshots

MAX_DEBATERS = 10
MAX_JUDGES = 10
MAX_CONCURRENCY = 100
MAX_RUNS = 20_000
OPTIONS = {o.name: o for o in (ROUNDS, WORD_LIMIT, SIMULTANEOUS)}


class ExperimentError(ValueError):
    """An experiment that cannot be made as asked; the message is for the user."""


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
    if len(debaters) > MAX_DEBATERS:
        raise ExperimentError(f"An experiment takes at most {MAX_DEBATERS} debaters.")
    if not judges:
        raise ExperimentError("An experiment needs at least one judge.")
    if len(judges) > MAX_JUDGES:
        raise ExperimentError(f"An experiment takes at most {MAX_JUDGES} judges.")
    for group, label in ((debaters, "debater"), (judges, "judge")):
        names = [c.spec.name for c in group]
        if len(set(names)) != len(names):
            raise ExperimentError(f"Each {label} must be a different persona.")
    clash = tournament_design.names_clash([c.spec.name for c in debaters], [c.spec.name for c in judges])
    if clash:
        raise ExperimentError(f"{', '.join(clash)} cannot both argue and judge.")
    for name, value in options.items():
        spec = OPTIONS.get(name)
        if spec is None:
            raise ExperimentError(f"There is no option {name!r}; the options are {', '.join(OPTIONS)}.")
        if isinstance(value, bool) or not isinstance(value, int) or not spec.minimum <= value <= spec.maximum:
            raise ExperimentError(f"{spec.label} must be a whole number from {spec.minimum} to {spec.maximum}.")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ExperimentError(f"Concurrency must be between 1 and {MAX_CONCURRENCY}.")
    if visibility not in Visibility.values:
        raise ExperimentError("Visibility must be private, unlisted or public.")
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
) -> Experiment:
    """Store an experiment with all its runs (nothing runs yet: see work.start)."""
    name = name.strip()
    if not name:
        raise ExperimentError("The experiment needs a name.")
    options = {k: v for k, v in (options or {}).items() if v is not None}
    protocols = list(protocols)
    _check(questions, protocols, debaters, judges, options, concurrency, visibility)
    if design.NEEDS_DEBATERS.isdisjoint(protocols):
        debaters = []  # nobody argues: no debaters to keep
    with transaction.atomic():
        experiment = Experiment.objects.create(
            name=name[:200],
            owner=owner,
            protocols=protocols,
            options=options,
            concurrency=concurrency,
            visibility=visibility,
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


def set_visibility(experiment: Experiment, value: str) -> None:
    """The experiment's visibility, and its runs' debates' with it (batches.set_visibility)."""
    batches.set_visibility(work.EXPERIMENT, experiment, value)


def delete(experiment: Experiment) -> None:
    """Delete an experiment and its runs' debates, stopping its run first (batches.delete)."""
    batches.delete(work.EXPERIMENT, experiment)
