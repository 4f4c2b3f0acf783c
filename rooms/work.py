"""A room's work on the runner (chaoslm/runner.py): its kinds, starting and stopping them, and the sweep that
resumes auto mode a restarted server or a killed worker stopped."""

from __future__ import annotations

from django.db.models import Q
from django.utils import timezone

from chaoslm import runner
from rooms.models import Room

ROUND = "room-round"
AUTO = "room-auto"


def start_round(room_id: int) -> None:
    """Every participating agent of the room answers, on the configured runner."""
    runner.submit(ROUND, room_id)


def start_auto(room_id: int) -> None:
    """Run the room's auto mode on the configured runner (a no-op if a loop already holds the room)."""
    runner.submit(AUTO, room_id)


def stop(room_id: int) -> None:
    """Stop the room's generation now, if it runs here; a worker's loop stops itself on the mode change."""
    runner.cancel(AUTO, room_id)
    runner.cancel(ROUND, room_id)


def resume_auto() -> list[int]:
    """Start the loop of every room in auto mode that no process holds; return their ids.

    A running loop renews its hold every CHAOSLM_ROOM_POLL seconds, so a lapsed hold means no loop runs.
    """
    lapsed = Q(held_until__isnull=True) | Q(held_until__lt=timezone.now())
    ids = list(Room.objects.filter(lapsed, mode=Room.Mode.AUTO).values_list("pk", flat=True))
    for room_id in ids:
        start_auto(room_id)
    return ids
