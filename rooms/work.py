"""A room's work on the runner (chaoslm/runner.py): its kinds and their coroutines (run inline, or inside
rooms/tasks.py's Celery tasks), starting and stopping them, and the sweep that resumes auto mode a restarted
server or a killed worker stopped."""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

from asgiref.sync import sync_to_async
from django.db.models import Q
from django.utils import timezone

from chaoslm import logging_context, runner
from rooms.broadcast import RoomBroadcaster
from rooms.engine import auto_loop, manual_round
from rooms.models import Room

logger = logging.getLogger("chaoslm.rooms")

ROUND = "room-round"
AUTO = "room-auto"


async def run_round(room_id: int) -> None:
    with logging_context.bound(room=room_id, owner=await _owner_of(room_id)):
        await quietly_if_deleted(room_id, manual_round(room_id, RoomBroadcaster(room_id)))


async def run_auto(room_id: int) -> None:
    with logging_context.bound(room=room_id, owner=await _owner_of(room_id)):
        await quietly_if_deleted(room_id, auto_loop(room_id, RoomBroadcaster(room_id)))


async def _owner_of(room_id: int) -> str | None:
    """The room owner's username, for the log lines of its work (None: no owner, or no room any more)."""
    query = Room.objects.filter(pk=room_id).values_list("owner__username", flat=True)
    return await sync_to_async(query.first)()


def start_round(room_id: int) -> None:
    """Every participating agent of the room answers, on the configured runner."""
    runner.submit(ROUND, room_id)


def start_auto(room_id: int) -> None:
    """Run the room's auto mode on the configured runner (a no-op if a loop already holds the room)."""
    runner.submit(AUTO, room_id)


def retry(room: Room) -> None:
    """Ask again after a failure: the loop's (auto mode) or the round's (manual) unanswered agents are asked again."""
    if room.mode == Room.Mode.AUTO:
        start_auto(room.pk)
    else:
        start_round(room.pk)


def stop(room_id: int, wait: bool = False) -> None:
    """Stop the room's generation now, if it runs here; a worker's loop stops itself on the mode change. With
    `wait`, wait for an inline run to have stopped, as long as runner.cancel waits."""
    runner.cancel(AUTO, room_id, wait)
    runner.cancel(ROUND, room_id, wait)


def delete(room: Room) -> None:
    """Delete a room, stopping its work first: an inline round or loop is cancelled at once (the answers in
    flight are dropped); a worker's loop sees the room gone at its next hold renewal and stops quietly."""
    Room.objects.filter(pk=room.pk).update(mode=Room.Mode.MANUAL)
    # Waited for, so that no answer of the room's is asked of a model after the delete.
    stop(room.pk, wait=True)
    runner.delete_under_work(Room.objects.filter(pk=room.pk))


async def quietly_if_deleted(room_id: int, work: Coroutine[Any, Any, Any]) -> None:
    """Run a room's work; if the room is deleted under it (a write or read fails and the room is gone), stop
    without a traceback: it is no error."""
    try:
        await work
    except Exception:
        if await sync_to_async(Room.objects.filter(pk=room_id).exists)():
            raise
        logger.info("room %s was deleted while it ran; its work stops", room_id)


def resume_auto() -> list[int]:
    """Start the loop of every room in auto mode that no process holds; return their ids.

    A running loop renews its hold every CHAOSLM_ROOM_POLL seconds, so a lapsed hold means no loop runs.
    """
    lapsed = Q(held_until__isnull=True) | Q(held_until__lt=timezone.now())
    ids = list(Room.objects.filter(lapsed, mode=Room.Mode.AUTO).values_list("pk", flat=True))
    for room_id in ids:
        start_auto(room_id)
    return ids
