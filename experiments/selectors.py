"""Reading an experiment: its jobs for the scheduler, its progress, and the judged runs the report is built from."""

from __future__ import annotations

from django.db.models import F

from debates.models import Debate
from experiments.models import Experiment, Run
from tournaments import batches, schedule, state

RUN = "run"  # the scheduler's kind for an experiment's job: every run stands alone


def jobs(experiment: Experiment, stalled_after: float | None = None, *, open_only: bool = False) -> list[schedule.Job]:
    """Every run's debate as it stands (see tournaments.state.jobs: the same reading, one query for the runs)."""
    fields = ("id", "attempts", "debate_id", "debate__status", "debate__created_at", "debate__started_at")
    runs = Run.objects.filter(experiment=experiment)
    if open_only:
        runs = runs.exclude(debate__status=schedule.COMPLETED)
    rows = [(RUN, row) for row in runs.values(*fields, job_match=F("id"), job_order=F("order"))]
    return state.jobs_from_rows(rows, stalled_after)


def progress(experiment: Experiment) -> state.ProgressView:
    decision = schedule.plan(batches.settings_of(experiment), jobs(experiment))
    return state.progress_view(
        decision.progress,
        experiment.status == Experiment.Status.RUNNING,
        Debate.objects.filter(experiment_run__experiment=experiment),
    )
