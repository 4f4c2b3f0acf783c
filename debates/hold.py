"""The owner's hold of a debate's start: it waits a set time (`Debate.starts_at`) so an audience can gather and
vote before it, while its page counts down. The owner may start it sooner.

The start is its own kind of runner work, "debate-start" (debates/work.py: `start_when_due`), submitted for the
start time: the inline runner sleeps until then, Celery holds the task until its ETA. When it runs it takes the
start (`claim`: one atomic update, so a start scheduled twice, an owner's "start now" and the ETA's, runs the
debate once) and runs the debate. The engine itself never starts a held debate (`Debate.held`), whatever asks
it to, so no model is called before the start. A restart loses the inline runner's sleeps: the sweep
(debates/recovery.py) submits every held debate again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from chaoslm import runner
from debates.models import Debate

KIND = "debate-start"
# The holds the new-debate form offers, in minutes (0: none); those past CHAOSLM_HOLD_MAX_MINUTES are left out.
OFFERED = (0, 1, 2, 5, 10, 15, 30, 60)
# A start that finds its debate still held this many seconds or more was scheduled for an earlier start time
# (the admin moved it later): the later schedule starts it. Less is a clock a little ahead: it waits that out.
EARLY_SLACK = 2.0


class HoldError(ValueError):
    """A hold that cannot be set; the message says why, for the person."""


def max_minutes() -> int:
    return int(settings.CHAOSLM_HOLD_MAX_MINUTES)


def choices() -> list[tuple[int, str]]:
    """The form's holds: none, then each offered number of minutes up to the maximum."""
    return [(m, "No hold: start at once" if m == 0 else f"{m} minute{'s' if m != 1 else ''}") for m in offered()]


def offered() -> list[int]:
    return [m for m in OFFERED if m <= max_minutes()]


def starts_at(minutes: int, now: datetime | None = None) -> datetime | None:
    """The start time of a hold of `minutes` from now (None for no hold); HoldError outside 0 to the maximum."""
    if not 0 <= minutes <= max_minutes():
        raise HoldError(f"The hold must be from 0 to {max_minutes()} minutes, not {minutes}.")
    return (now or timezone.now()) + timedelta(minutes=minutes) if minutes else None


def check_start_time(when: datetime | None, now: datetime | None = None) -> None:
    """HoldError unless `when` (a start time the admin typed) is at most the maximum hold from now."""
    latest = (now or timezone.now()) + timedelta(minutes=max_minutes())
    if when is not None and when > latest:
        raise HoldError(f"A debate may be held at most {max_minutes()} minutes (CHAOSLM_HOLD_MAX_MINUTES).")


def schedule(debate: Debate) -> None:
    """Submit the debate's start for its start time (at once if it has none or it has passed)."""
    runner.submit(KIND, debate.pk, at=debate.starts_at)


def reschedule(debate: Debate) -> None:
    """The start time changed (the admin): drop the inline runner's wait for the old one and schedule the new."""
    if debate.started_at is not None:
        return
    runner.cancel(KIND, debate.pk)
    schedule(debate)


def start_now(debate: Debate, now: datetime | None = None) -> bool:
    """The owner ends the hold: the debate starts at once. False if it was not held (started already)."""
    now = now or timezone.now()
    held = Debate.objects.filter(pk=debate.pk, started_at__isnull=True, starts_at__gt=now)
    if not held.update(starts_at=now, updated_at=now):
        return False
    debate.starts_at = now
    runner.cancel(KIND, debate.pk)
    runner.submit(KIND, debate.pk)
    return True


def seconds_left(debate_id: int, now: datetime | None = None) -> float | None:
    """Seconds until the debate may start (0 or less: now); None when there is nothing to start (it started, or
    it is gone)."""
    row = Debate.objects.filter(pk=debate_id).values("status", "started_at", "starts_at").first()
    if row is None or row["started_at"] is not None or row["status"] != Debate.Status.PENDING:
        return None
    if row["starts_at"] is None:
        return 0.0
    return (row["starts_at"] - (now or timezone.now())).total_seconds()


def claim(debate_id: int) -> bool:
    """Take the debate's start (True for the one caller that does): it is marked running and started."""
    now = timezone.now()
    unstarted = Debate.objects.filter(pk=debate_id, status=Debate.Status.PENDING, started_at__isnull=True)
    return unstarted.update(status=Debate.Status.RUNNING, started_at=now, updated_at=now) == 1


def held_debates(due_before: datetime | None = None) -> list[Debate]:
    """Debates held and not started yet (with `due_before`: only those whose start time is before it)."""
    found = Debate.objects.filter(status=Debate.Status.PENDING, started_at__isnull=True, starts_at__isnull=False)
    if due_before is not None:
        found = found.filter(starts_at__lt=due_before)
    return list(found)


def box(debate: Debate, now: datetime | None = None) -> dict[str, object] | None:
    """What the countdown box shows (None when the debate is not held): the start time and the seconds to it."""
    now = now or timezone.now()
    if not debate.held(now):
        return None
    assert debate.starts_at is not None
    seconds = max(0, int((debate.starts_at - now).total_seconds() + 0.999))
    return {"starts_at": debate.starts_at, "seconds": seconds, "left": f"{seconds // 60}:{seconds % 60:02d}"}
