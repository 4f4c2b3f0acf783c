"""How much one user may run at once, and how often they may start something.

Every running debate, room in auto mode or tournament match makes LLM calls and pushes to the
live pages, on the same machines that serve the pages; one user starting fifty of them slowed every
page for everyone. The apps count what a user runs (this module imports no app) and ask here:

    with limits.starting(user):      # one start per user at a time, so two cannot both fit
        limits.check(user, ("debate running", "debates running"), running=..., cap=...)
        limits.note_start(user)      # the rate limit (a moving window: `rate`)
        ... create and start ...

(debates/limits.py and rooms/limits.py do this for their apps; tournaments count their matches.)

Staff are exempt when CHAOSLM_LIMITS_EXEMPT_STAFF is on (the default).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

# What a refusal for a cap (so many running at once) tells a client to wait: when one ends cannot be foreseen.
CAP_RETRY_AFTER = 60


class LimitReached(Exception):
    """The user may not start this now; the message says why and what to do, `retry_after` in how many seconds
    (the API's Retry-After)."""

    def __init__(self, message: str, *, retry_after: int = CAP_RETRY_AFTER) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def exempt(user: Any) -> bool:
    return bool(getattr(user, "is_staff", False)) and settings.CHAOSLM_LIMITS_EXEMPT_STAFF


@contextlib.contextmanager
def starting(user: Any) -> Iterator[None]:
    """A transaction in which the user's starts happen one at a time: count, check, then start.

    The user's row is locked (SQLite's IMMEDIATE transactions serialize all writers anyway), so fifty
    requests at once each see the ones before them.
    """
    with transaction.atomic():
        if user is not None and user.pk is not None:
            list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True))
        yield


def check(user: Any, what: tuple[str, str], *, running: int, cap: int) -> None:
    """Refuse when `user` already has `cap` of `what` (singular and plural: "debate running") at once."""
    if user is None or exempt(user) or running < cap:
        return
    raise LimitReached(
        f"You already have {running} {what[running != 1]}, the most one person may run at once. "
        "End one (or wait for one to finish), then try again."
    )


def note_start(user: Any) -> None:
    """Count a start against the user's rate limit, or refuse it when they started too many lately: at most
    CHAOSLM_STARTS_PER_MINUTE starts of debates and auto modes together in any 60 seconds (`rate`)."""
    if user is None or user.pk is None or exempt(user):
        return
    allowed = settings.CHAOSLM_STARTS_PER_MINUTE
    wait = rate(f"chaoslm:starts:{user.pk}", allowed)
    if wait is not None:
        raise LimitReached(
            f"You started {allowed} debates or auto modes in the last minute, the most allowed. "
            f"Try again in {wait} seconds.",
            retry_after=wait,
        )


_limiter: Any = None


def _moving_window() -> Any:
    """The `limits` library's moving-window limiter over Redis when REDIS_URL is set, so every web process counts
    together; else this process's memory."""
    global _limiter
    if _limiter is None:
        # Here, not at the top: this module loads with every command, and `limits` (with its async storages)
        # takes a good part of a second to import.
        from limits.storage import storage_from_string
        from limits.strategies import MovingWindowRateLimiter

        _limiter = MovingWindowRateLimiter(storage_from_string(settings.REDIS_URL or "memory://"))
    return _limiter


def rate(name: str, per_minute: int) -> int | None:
    """Count one more under `name`, at most `per_minute` in any 60 seconds: None when it is allowed (and counted),
    else the whole seconds until one more will be (a refused one is not counted).

    A moving window (the `limits` library: each allowed call's time is kept, in Redis by an atomic script), not
    clock minutes, where twice the limit passes across a minute's end: `per_minute` at :59 and again at :00."""
    if per_minute <= 0:
        return None
    limiter = _moving_window()
    from limits import RateLimitItemPerMinute  # loaded by _moving_window

    item = RateLimitItemPerMinute(per_minute)
    if limiter.hit(item, name):
        return None
    reset, _remaining = limiter.get_window_stats(item, name)
    return max(1, math.ceil(reset - time.time()))


def reset() -> None:
    """Forget every count (the tests start each from zero)."""
    _moving_window().storage.reset()
