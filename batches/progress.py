"""A batch's progress, read from its jobs: the jobs from rows as any kind reads them, the progress bar's figures,
and the ETA at the pace of the batch's model calls."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Max, Min, QuerySet
from django.utils import timezone

from batches import schedule
from chaoslm import runner
from debates.models import Debate, Event


def jobs_from_rows(rows: list[tuple[str, dict]], stalled_after: float | None = None) -> list[schedule.Job]:
    """Jobs from (kind, row) pairs; a row has the job's id, attempts, job_match and job_order, and its debate's
    debate_id, debate__status, debate__created_at and debate__started_at (any batch's jobs read so: experiments
    too), and may have debate__runner. With `stalled_after`, one query, the newest event of the debates in flight
    for longer than that, tells a stalled one (its worker died) from a slow one; the runner of each debate in
    flight tells at once whether its process has ended (read from the rows, or in a query of its own)."""
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
        in_flight = [row for _, row in rows if row["debate__status"] in schedule.IN_FLIGHT]
        if in_flight and all("debate__runner" in row for row in in_flight):
            # Read with the rows (a kind's `jobs` may name its debate's runner among them): no query more.
            ended = {row["debate_id"]: runner.gone(row["debate__runner"]) for row in in_flight}
        elif in_flight:
            found = Debate.objects.filter(pk__in=[row["debate_id"] for row in in_flight]).values_list("pk", "runner")
            ended = {pk: runner.gone(name) for pk, name in found}

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
class Estimate:
    """What the ETA is made of: time since the batch's first debate started, calls made and still to make, whether
    a debate has finished yet, and the seconds left at the pace so far (counted from the last call, so it runs
    down as time passes: negative once the batch is late)."""

    elapsed: float
    calls_made: int
    calls_left: int
    any_finished: bool
    seconds_left: float | None  # None before the first call: no pace yet


def duration(seconds: float) -> str:
    """A span of time for reading: "2 h 5 min", "3 min 10 s", "40 s"."""
    seconds = max(round(seconds), 0)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds} s"


@dataclass(frozen=True)
class ProgressView:
    """The progress bar's figures: debates done, running, failed, of all; the percentages; an ETA."""

    total: int
    done: int
    running: int
    failed: int
    estimate: Estimate | None = None

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
    def eta_seconds(self) -> float | None:
        """Seconds left at the pace so far; None with no pace yet, or once that pace's end has passed."""
        left = self.estimate.seconds_left if self.estimate else None
        return left if left is not None and left > 0 else None

    @property
    def overdue(self) -> bool:
        """Whether the batch runs past the time its pace so far said it would take."""
        left = self.estimate.seconds_left if self.estimate else None
        return left is not None and left <= 0

    @property
    def overdue_text(self) -> str:
        """What the ETA says once its time has passed (the page switches to it on its own clock too)."""
        e = self.estimate
        if e is None:
            return ""
        made = f"{e.calls_made} of {e.calls_made + e.calls_left} model calls"
        return f"taking longer than estimated: {made} made in {duration(e.elapsed)}"

    @property
    def eta_text(self) -> str:
        e = self.estimate
        if e is None:
            return ""
        if e.seconds_left is None:
            if e.calls_made:  # calls stored in the same instant as the start: no pace to go by yet
                made = f"{e.calls_made} of {e.calls_made + e.calls_left} model calls"
                return f"estimating: {made} made, {duration(e.elapsed)} in"
            return f"estimating: no model call has finished yet, {duration(e.elapsed)} in"
        if e.seconds_left <= 0:
            return self.overdue_text
        text = f"about {duration(e.seconds_left)} left"
        if not e.any_finished:
            # One debate's calls differ (a judge's verdict is longer than a plan): say how little it stands on.
            made = f"{e.calls_made} of {e.calls_made + e.calls_left} model calls"
            text += f" (estimated from {made}; no debate has finished yet)"
        return text


# Events that are no model call: the rest (plans, thoughts, statements, scores, verdict calls) are one call each.
NOT_CALLS = ("HEADER", "SYSTEM", "ERROR", "USER")


def progress_view(
    every_job: Sequence[schedule.Job],
    settings: schedule.Settings,
    debates: QuerySet[Debate],
    planned_calls: Callable[[schedule.Job], int],
) -> ProgressView:
    """A batch's progress bar (a tournament's, an experiment's): done, running and failed debates from its jobs,
    and while it runs, the ETA from `debates`, its debates, and the calls each job plans."""
    figures = schedule.plan(settings, every_job).progress
    found = None
    if figures.remaining and settings.active:
        found = estimate(debates, every_job, planned_calls)
    return ProgressView(figures.total, figures.done, figures.running, figures.failed, found)


def estimate(
    debates: QuerySet[Debate], every_job: Sequence[schedule.Job], planned_calls: Callable[[schedule.Job], int]
) -> Estimate | None:
    """The time left at the pace of the calls made since the batch's first debate started (None before it starts).

    Counted in calls, not debates: a debate makes its calls one after another (a duel 4T+6, an evidence debate
    2R+3, a judge's replay a few) and finishes only at the end of its last, so a pace in finished debates shows
    no ETA for the whole first round and then one that grows as the debates in flight are not counted. A
    completed job made all its planned calls (`planned_calls(job)`); the calls of the others are their
    debates' stored events (over the debates not completed: at most `concurrency` of them in flight, plus the
    failed). The pace is taken at the last call and the time left counted from it: between calls the estimate
    runs down instead of standing still, and once it has run out the batch is known to be late.
    """
    bounds = debates.aggregate(first=Min("started_at"), last_end=Max("finished_at"))
    first = bounds["first"]
    if first is None:
        return None
    open_events = Event.objects.filter(debate__in=debates.exclude(status=schedule.COMPLETED)).exclude(
        kind__in=NOT_CALLS
    )
    made_by_status = dict(
        open_events.values("debate__status").annotate(calls=Count("id")).values_list("debate__status", "calls")
    )
    last_call = open_events.aggregate(at=Max("created_at"))["at"]
    finished = sum(planned_calls(job) for job in every_job if job.status == schedule.COMPLETED)
    made = finished + sum(made_by_status.values())
    now = timezone.now()
    elapsed = (now - first).total_seconds()
    # Calls still to make: those of every job neither completed nor failed, less what the open ones made.
    open_jobs = [j for j in every_job if j.status != schedule.COMPLETED and j.status != schedule.ERROR]
    made_open = sum(calls for status, calls in made_by_status.items() if status != schedule.ERROR)
    left = max(sum(planned_calls(job) for job in open_jobs) - made_open, 0)
    any_finished = any(job.status == schedule.COMPLETED for job in every_job)
    last = max((t for t in (last_call, bounds["last_end"]) if t), default=None)
    if not made or last is None or last <= first:
        return Estimate(elapsed, made, left, any_finished, None)
    pace = (last - first).total_seconds() / made
    return Estimate(elapsed, made, left, any_finished, (last - now).total_seconds() + left * pace)


@dataclass
class ReportThrottle:
    """How often this process redraws a running batch's report for its live page: at most once every `every`
    seconds, as the report reads every finished run; a settled batch's always, so the last a page gets is whole."""

    every: float
    drawn: dict[int, float] = field(default_factory=dict)  # batch id -> when its report was last drawn

    def due(self, batch_id: int, *, running: bool) -> bool:
        if not running:
            self.drawn.pop(batch_id, None)
            return True
        now = time.monotonic()
        if now - self.drawn.get(batch_id, -math.inf) < self.every:
            return False
        self.drawn[batch_id] = now
        return True
