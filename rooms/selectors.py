"""What the room pages read."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from chaoslm.personas.models import Persona
from rooms.broadcast import in_queue_order, status_context
from rooms.models import Room, RoomAgent, RoomMessage
from rooms.table import load_room


def room_status(room: Room, **extra: Any) -> dict[str, Any]:
    """The status line's context, loaded from the database (the broadcaster keeps its own in memory)."""
    table = load_room(room.pk)
    return status_context(room, in_queue_order(room, table.agents), table.meter().state(), **extra)


def agents_in_order(room: Room) -> list[RoomAgent]:
    """The room's agents in queue order, as the status line and the side panel list them."""
    return in_queue_order(room, list(room.agents.all()))


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
