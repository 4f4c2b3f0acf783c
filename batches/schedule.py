"""What a tournament starts now, as a pure function of its configuration and its debates' states.

No Django here: the caller reads the matches and judgments (a `Job` per debate the tournament needs)
and carries out the `Decision`. A job is a match's own debate (MATCH, whatever its format) or a
judgment's replay; a replay can start once its match's debate has completed. Nothing here counts
anything into a field: running it again on the same state gives the same answer, which is what makes
a crashed tournament resume cleanly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

# The debate statuses (debates.models.Debate.Status), as plain strings.
IN_FLIGHT = frozenset({"pending", "running", "waiting"})
COMPLETED = "completed"
ERROR = "error"
INTERRUPTED = "interrupted"

MATCH = "match"  # a match's own debate (a tournament's match, an experiment's run with a debate of its own)
REPLAY = "replay"  # a judge's replay of a finished match debate
MAX_ATTEMPTS = 2  # a failed debate is retried once


@dataclass(frozen=True)
class Job:
    kind: str  # MATCH or REPLAY
    id: int  # the match's id (MATCH) or the judgment's (REPLAY)
    match: int
    order: int  # the match's place: earlier matches go first
    status: str | None  # its debate's status; None while it has no debate
    attempts: int = 0  # how many times it was started fresh (created, then retried after an error)
    stalled: bool = False  # in flight, but no progress for longer than the stall limit


@dataclass(frozen=True)
class Settings:
    concurrency: int
    active: bool  # False when paused or cancelled: start nothing
    max_attempts: int = MAX_ATTEMPTS


@dataclass(frozen=True)
class Progress:
    total: int = 0
    done: int = 0
    running: int = 0
    failed: int = 0

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed


@dataclass(frozen=True)
class Decision:
    create: tuple[Job, ...] = ()  # make the debate and start it
    retry: tuple[Job, ...] = ()  # it failed: start it again, one attempt more
    resume: tuple[Job, ...] = ()  # interrupted or stalled: start it again, not a new attempt
    progress: Progress = field(default_factory=Progress)
    # Nothing is in flight and nothing is left to start (every job completed or failed for good).
    settled: bool = False


def _failed_for_good(job: Job, max_attempts: int) -> bool:
    """Its debate failed on its last attempt, or it could not be made at all (no debate, attempts used up)."""
    return job.status in (ERROR, None) and job.attempts >= max_attempts


def plan(settings: Settings, jobs: Sequence[Job]) -> Decision:
    """What to start now, never more than `settings.concurrency` debates in flight at once."""
    match_state = {j.match: j for j in jobs if j.kind == MATCH}
    in_flight = [j for j in jobs if j.status in IN_FLIGHT]
    done = failed = 0
    startable: list[Job] = []
    retryable: list[Job] = []
    resumable: list[Job] = []
    for job in jobs:
        if job.status == COMPLETED:
            done += 1
        elif job.status in IN_FLIGHT:
            continue
        elif _failed_for_good(job, settings.max_attempts):
            failed += 1
        elif job.kind == REPLAY and (judged := match_state.get(job.match)) is not None and judged.status != COMPLETED:
            # A replay judges the finished match debate: it waits for it, and fails with it.
            if _failed_for_good(judged, settings.max_attempts):
                failed += 1
        elif job.status is None:
            startable.append(job)
        elif job.status == ERROR:
            retryable.append(job)
        elif job.status == INTERRUPTED:
            resumable.append(job)
    stalled = tuple(j for j in in_flight if j.stalled)
    progress = Progress(total=len(jobs), done=done, running=len(in_flight), failed=failed)
    if not settings.active:
        return Decision(progress=progress, settled=not in_flight)
    slots = max(settings.concurrency - len(in_flight), 0)
    # Work already begun first, then replays of finished debates (verdicts land sooner), then new match debates.
    resume = tuple(resumable[:slots])
    slots -= len(resume)
    retry = tuple(retryable[:slots])
    slots -= len(retry)
    startable.sort(key=lambda j: (j.kind != REPLAY, j.order, j.id))
    create = tuple(startable[:slots])
    settled = not in_flight and not (resumable or retryable or startable)
    return Decision(create=create, retry=retry, resume=stalled + resume, progress=progress, settled=settled)
