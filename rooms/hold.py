"""Holding a room: one round or auto loop a room at a time, whoever asks and however many processes run.

A hold lapses CHAOSLM_ROOM_HOLD seconds after its last renewal, so a killed process leaves nothing behind; an auto
loop's renewal notices within CHAOSLM_ROOM_POLL seconds that auto mode was switched off, and stops its work."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from rooms.models import Room


def _claim(room_id: int) -> bool:
    now = timezone.now()
    lapsed = Q(held_until__isnull=True) | Q(held_until__lt=now)
    held = now + timedelta(seconds=settings.CHAOSLM_ROOM_HOLD)
    return Room.objects.filter(lapsed, pk=room_id).update(held_until=held) == 1


def _renew(room_id: int, only_in_auto: bool) -> bool:
    rooms = Room.objects.filter(pk=room_id)
    if only_in_auto:
        rooms = rooms.filter(mode=Room.Mode.AUTO)
    return rooms.update(held_until=timezone.now() + timedelta(seconds=settings.CHAOSLM_ROOM_HOLD)) == 1


def _release(room_id: int) -> None:
    Room.objects.filter(pk=room_id).update(held_until=None)


@contextlib.asynccontextmanager
async def holding(room_id: int, *, wait: float = 0.0, only_in_auto: bool = False) -> AsyncIterator[bool]:
    """Hold the room for the block; yields False (and holds nothing) if another holds it for `wait` seconds.

    With `only_in_auto`, the block is stopped (cancelled, quietly) as soon as the room leaves auto mode.
    """
    deadline = asyncio.get_running_loop().time() + wait
    while not await sync_to_async(_claim)(room_id):
        if asyncio.get_running_loop().time() >= deadline:
            yield False
            return
        await asyncio.sleep(min(settings.CHAOSLM_ROOM_POLL, 0.1))
    work = asyncio.current_task()
    assert work is not None
    left_auto = False

    async def keep() -> None:
        nonlocal left_auto
        while await sync_to_async(_renew)(room_id, only_in_auto):
            await asyncio.sleep(settings.CHAOSLM_ROOM_POLL)
        left_auto = True
        work.cancel()

    keeper = asyncio.create_task(keep())
    try:
        yield True
    except asyncio.CancelledError:
        if not left_auto:
            raise
        work.uncancel()
    finally:
        keeper.cancel()
        try:
            await asyncio.gather(keeper, return_exceptions=True)
        except asyncio.CancelledError:
            # The room left auto mode just as the block ended: the stop came too late to interrupt it.
            if not left_auto:
                raise
            work.uncancel()
        await sync_to_async(_release)(room_id)
