"""How much one user may run at once, and how often they may start something.

Every running debate, room in auto mode or tournament match makes LLM calls and pushes to the
live pages, on the same machines that serve the pages; one user starting fifty of them slowed every
page for everyone. The apps count what a user runs (this module imports no app) and ask here:

    with limits.starting(user):      # one start per user at a time, so two cannot both fit
        limits.check(user, ("debate running", "debates running"), running=..., cap=...)
        limits.note_start(user)      # the rate limit
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
from django.core.cache import cache
from django.db import transaction

RATE_WINDOW = 60.0


class LimitReached(Exception):
    """The user may not start this now; the message says why and what to do."""


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
    """Count a start against the user's rate limit, or refuse it when they started too many lately.

    A fixed one-minute window in Django's cache (Redis when REDIS_URL is set, so it holds across web
    processes): at most CHAOSLM_STARTS_PER_MINUTE starts of debates and auto modes together.
    """
    if user is None or user.pk is None or exempt(user):
        return
    allowed = settings.CHAOSLM_STARTS_PER_MINUTE
    count, wait = count_in_window(f"chaoslm:starts:{user.pk}")
    if count > allowed:
        raise LimitReached(
            f"You started {allowed} debates or auto modes in the last minute, the most allowed. "
            f"Try again in {wait} seconds."
        )


def count_in_window(name: str) -> tuple[int, int]:
    """Count one more under `name` in this one-minute window of Django's cache: the count so far, this one
    included, and the seconds until the window ends (the rate limits of starts and of votes)."""
    now = time.time()
    window = math.floor(now / RATE_WINDOW)
    key = f"{name}:{window}"
    cache.add(key, 0, timeout=int(RATE_WINDOW) + 5)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=int(RATE_WINDOW) + 5)
        count = 1
    return count, max(1, math.ceil((window + 1) * RATE_WINDOW - now))
