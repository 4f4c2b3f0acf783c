"""What the room pages read."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from chaoslm.personas.models import Persona
from rooms.broadcast import in_queue_order, status_context, status_html
from rooms.engine import load_room
from rooms.models import Room, RoomMessage


def room_status(room: Room, **extra: Any) -> dict[str, Any]:
    """The status line's context, loaded from the database (the broadcaster keeps its own in memory)."""
    table = load_room(room.pk)
    return status_context(room, in_queue_order(room, table.agents), table.meter().state(), **extra)


def room_status_html(room: Room) -> str:
    """The status line as it stands now, for a push after an owner's action."""
    table = load_room(room.pk)
    return status_html(table.room, in_queue_order(table.room, table.agents), table.meter().state())


def page_messages(room: Room, *, with_whispers: bool) -> tuple[list[RoomMessage], list[RoomMessage]]:
    """The room's messages and its pending answers, in order; whispers only `with_whispers` (the owner's)."""
    messages = list(room.messages.select_related("agent"))
    if not with_whispers:
        messages = [m for m in messages if not m.audience]
    return (
        [m for m in messages if m.kind != RoomMessage.Kind.PENDING],
        [m for m in messages if m.kind == RoomMessage.Kind.PENDING],
    )


def personas_to_add(room: Room) -> QuerySet[Persona]:
    return Persona.objects.exclude(name__in=room.agents.values_list("name", flat=True))


def rooms_of(owner: Any) -> QuerySet[Room]:
    return Room.objects.filter(owner=owner)
