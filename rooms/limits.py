"""How many rooms one user has in auto mode, for the per-user cap (the rule itself is chaoslm/limits.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from chaoslm import costs, limits
from rooms.models import Room


def auto_rooms(user: Any, excluding: Room | None = None) -> int:
    rooms = Room.objects.filter(owner=user, mode=Room.Mode.AUTO)
    if excluding is not None:
        rooms = rooms.exclude(pk=excluding.pk)
    return rooms.count()


def check_auto(user: Any, room: Room) -> None:
    """Raise limits.LimitReached unless `user` may switch one more room to auto mode now, costs.OverBudget while
    their monthly budget is spent.

    Call it inside `limits.starting(user)`.
    """
    costs.check(user)
    running = auto_rooms(user, room)
    limits.check(
        user, ("room in auto mode", "rooms in auto mode"), running=running, cap=settings.CHAOSLM_MAX_AUTO_ROOMS
    )
    limits.note_start(user)
