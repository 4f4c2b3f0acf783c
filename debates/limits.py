"""How many debates one user runs at once, for the per-user cap (the rule itself is chaoslm/limits.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from chaoslm import limits
from debates.models import Debate

# A pending debate is about to run: counting it keeps a burst of starts from slipping past the cap
# before the runner marks the first ones running.
ACTIVE = (Debate.Status.PENDING, Debate.Status.RUNNING)


def running(user: Any) -> int:
    """The user's own debates running; a tournament's matches count against its cap instead."""
    return Debate.objects.filter(owner=user, status__in=ACTIVE, in_batch=False).count()


def running_in_batches(user: Any) -> int:
    """The user's debates that batches (tournaments) started and that are running or about to."""
    return Debate.objects.filter(owner=user, status__in=ACTIVE, in_batch=True).count()


def check_start(user: Any, *, rate: bool = True) -> None:
    """Raise limits.LimitReached unless `user` may start (or resume) one more debate now.

    Call it inside `limits.starting(user)`; `rate=False` for resuming a debate that waited for the
    person's message, which is not a new start.
    """
    if user is None:
        return  # debates from the command line with no owner
    limits.check(
        user, ("debate running", "debates running"), running=running(user), cap=settings.CHAOSLM_MAX_RUNNING_DEBATES
    )
    if rate:
        limits.note_start(user)
