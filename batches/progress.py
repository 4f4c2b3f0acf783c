"""A batch's progress, read from its jobs: the jobs from rows as any kind reads them, the progress bar's figures,
and the ETA at the pace of the batch's model calls."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Max, QuerySet
from django.utils import timezone

from batches import schedule
from chaoslm import runner
from debates.models import Debate, Event


def jobs_from_rows(rows: list[tuple[str, dict]], stalled_after: float | None = None) -> list[schedule.Job]:
    """Jobs from (kind, row) pairs; a row has the job's id, attempts, job_match and job_order, and its debate's
    debate_id, debate__status, debate__created_at and debate__started_at (any batch's jobs read so: experiments
    too). With `stalled_after`, one query, the newest event of the debates in flight for longer than that,
    tells a stalled one (its worker died) from a slow one."""
    cutoff = timezone.now() - timedelta(seconds=stalled_after or 0)
    newest: dict[int, datetime] = {}
    if stalled_after is not None:
        # Only a debate created and started before the cutoff can be stalled: only theirs need their events read.
        old = [
            row["debate_id"]
            for _, row in rows
            if row["debate__status"] in schedule.IN_FLIGHT
            and max(t for t in (row["debate__created_at"], row["debate__started_at"]) if t) < cutoff
        ]
        if old:
            newest = dict(
                Event.objects.filter(debate_id__in=old)
                .values("debate_id")
                .annotate(at=Max("created_at"))
                .values_list("debate_id", "at")
            )

    ended: dict[int, bool | None] = {}
    if stalled_after is not None:
        in_flight = [row["debate_id"] for _, row in rows if row["debate__status"] in schedule.IN_FLIGHT]
        if in_flight:
            runners = Debate.objects.filter(pk__in=in_flight).values_list("pk", "runner")
            ended = {pk: runner.gone(name) for pk, name in runners}

    def stalled(row: dict) -> bool:
        """Its process has ended (known at once); or, where that cannot be told, no progress for `stalled_after`."""
        if stalled_after is None or row["debate__status"] not in schedule.IN_FLIGHT:
            return False
        gone = ended.get(row["debate_id"])
        if gone is not None:
            return gone
        times = [t for t in (row["debate__created_at"], row["debate__started_at"], newest.get(row["debate_id"])) if t]
        return max(times) < cutoff

    return [
        schedule.Job(
            kind=kind,
            id=row["id"],
            match=row["job_match"],
            order=row["job_order"],
            status=row["debate__status"],
            attempts=row["attempts"],
            stalled=stalled(row),
        )
        for kind, row in rows
    ]


def settings_of(batch: Any) -> schedule.Settings:
    """The scheduler's settings of a batch (a `batches.models.BatchRecord`): its concurrency, and whether it runs."""
    return schedule.Settings(concurrency=batch.concurrency, active=batch.status == "running")


@dataclass(frozen=True)
class ProgressView:
    """The progress bar's figures: debates done, running, failed, of all; the percentages; an ETA."""

    total: int
    done: int
    running: int
    failed: int
    eta_seconds: float | None

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    def percent(self, count: int) -> float:
        return round(100 * count / self.total, 2) if self.total else 0.0

    @property
    def done_percent(self) -> float:
        return self.percent(self.done)

    @property
    def running_percent(self) -> float:
        return self.percent(self.running)

    @property
    def failed_percent(self) -> float:
        return self.percent(self.failed)

    @property
    def eta_text(self) -> str:
        if self.eta_seconds is None:
            return ""
        seconds = int(self.eta_seconds)
        if seconds >= 3600:
            return f"about {seconds // 3600} h {seconds % 3600 // 60} min left"
        if seconds >= 60:
            return f"about {seconds // 60} min {seconds % 60} s left"
        return f"about {seconds} s left"


# Events that are no model call: the rest (plans, thoughts, statements, scores, verdict calls) are one call each.
NOT_CALLS = ("HEADER", "SYSTEM", "ERROR", "USER")


def progress_view(
    every_job: Sequence[schedule.Job],
    settings: schedule.Settings,
    debates: QuerySet[Debate],
    planned_calls: Callable[[schedule.Job], int],
) -> ProgressView:
    """A batch's progress bar (a tournament's, an experiment's): done, running and failed debates from its jobs,
    and while it runs, the ETA (`eta_seconds`) from `debates`, its debates, and the calls each job plans."""
    figures = schedule.plan(settings, every_job).progress
    eta = None
    if figures.remaining and settings.active:
        eta = eta_seconds(debates, every_job, planned_calls)
    return ProgressView(figures.total, figures.done, figures.running, figures.failed, eta)


def eta_seconds(
    debates: QuerySet[Debate], every_job: Sequence[schedule.Job], planned_calls: Callable[[schedule.Job], int]
) -> float | None:
    """The time left at the pace of the calls made since the batch's first debate started, from the first call on.

    Counted in calls, not debates: a debate makes its calls one after another (a duel 4T+6, an evidence debate
    2R+3, a judge's replay a few) and finishes only at the end of its last, so a pace in finished debates shows
    no ETA for the whole first round and then one that grows as the debates in flight are not counted. A
    completed job made all its planned calls (`planned_calls(job)`); the calls of the others are their
    debates' stored events (two queries, over the debates not completed: at most `concurrency` of them in
    flight, plus the failed).
    """
    first = debates.filter(started_at__isnull=False).order_by("started_at").values_list("started_at", flat=True).first()
    if first is None:
        return None
    made_by_status = dict(
        Event.objects.filter(debate__in=debates.exclude(status=schedule.COMPLETED))
        .exclude(kind__in=NOT_CALLS)
        .values("debate__status")
        .annotate(calls=Count("id"))
        .values_list("debate__status", "calls")
    )
    finished = sum(planned_calls(job) for job in every_job if job.status == schedule.COMPLETED)
    made = finished + sum(made_by_status.values())
    elapsed = (timezone.now() - first).total_seconds()
    if not made or elapsed <= 0:
        return None
    # Calls still to make: those of every job neither completed nor failed, less what the open ones made.
    open_jobs = [j for j in every_job if j.status != schedule.COMPLETED and j.status != schedule.ERROR]
    made_open = sum(calls for status, calls in made_by_status.items() if status != schedule.ERROR)
    left = max(sum(planned_calls(job) for job in open_jobs) - made_open, 0)
    return left * elapsed / made
