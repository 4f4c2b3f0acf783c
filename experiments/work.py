"""The experiment kind of batch (`EXPERIMENT`): an experiment is a batch (batches/kinds.py), like a tournament, so one
pass, the owner's cap, the inline loop, the Celery tick chain, the sweep, the owner's actions and resuming after a
crash are the same code; here is how its runs' debates are made."""

from __future__ import annotations

from typing import Any

from batches import schedule
from batches.kinds import BatchKind
from debates.formats import FormatError, get_format
from debates.models import Debate
from debates.replay import create_replay
from debates.setup import SeatChoice, create_debate
from experiments import broadcast, design, selectors
from experiments.models import Experiment, Participant, Run


def _choice(participant: Participant) -> SeatChoice:
    return SeatChoice(spec=participant.persona_spec())


def run_options(experiment: Experiment, run: Run) -> dict[str, Any]:
    """The run's debate options: its question with the answers in the run's order, and the experiment's
    options that its protocol has."""
    question = run.question
    known = {o.name for o in get_format(run.protocol).option_specs}
    options: dict[str, Any] = {
        "passage": question.passage,
        "question": question.question,
        "answers": design.shown(question.answers, run.swapped),
        **{k: v for k, v in experiment.options.items() if k in known},
    }
    if run.protocol == design.CONSULTANCY:
        assert run.assigned is not None
        options["consultant_answer"] = design.letter_of(run.assigned, run.swapped)
    return options


def _create_debate(experiment: Experiment, run_id: int) -> Debate:
    run = Run.objects.select_related("question", "judge", "first", "second", "source__debate").get(pk=run_id)
    if run.source is not None:
        source = run.source.debate
        if source is None:
            raise FormatError(f"Run {run.order}'s debate has not been made yet.")
        return create_replay(
            source, _choice(run.judge), owner=experiment.owner, visibility=experiment.visibility, in_batch=True
        )
    seats = {"judge": _choice(run.judge)}
    if run.protocol == design.DEBATE:
        a, b = design.seats(run.first, run.second, run.swapped)
        assert a is not None and b is not None
        seats |= {"a": _choice(a), "b": _choice(b)}
    elif run.protocol == design.CONSULTANCY:
        assert run.first is not None
        seats["consultant"] = _choice(run.first)
    return create_debate(
        format_name=run.protocol,
        topic=run.question.question,
        seats=seats,
        options=run_options(experiment, run),
        owner=experiment.owner,
        visibility=experiment.visibility,
        in_batch=True,
    )


class ExperimentKind(BatchKind):
    """An experiment's jobs: a run's debate, or a panel judge's replay of another run's."""

    kind = "experiment"
    faces = "experiments.faces.FACES"
    model = Experiment
    rows = Run
    batch_link = "experiment"
    # Its hooks that its own modules answer.
    jobs = staticmethod(selectors.jobs)
    progress = staticmethod(selectors.progress)
    group = staticmethod(broadcast.group)
    live_html = staticmethod(broadcast.live_html_of)

    def create(self, batch: Experiment, job: schedule.Job, memo: dict[str, Any]) -> int | None:
        return self.link(job, _create_debate(batch, job.id))


EXPERIMENT = ExperimentKind()
