"""What the room pages read."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from chaoslm.costs import SpendRow, Total, totals_by
from chaoslm.llm import marks
from personas.models import Persona
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


# The messages a model writes: an agent's answer (kept, or pending the owner's choice) and a summary.
MODEL_KINDS = (RoomMessage.Kind.AGENT, RoomMessage.Kind.PENDING, RoomMessage.Kind.SUMMARY)


def embedded_line(messages: list[RoomMessage]) -> str:
    """What the room's page says of the embedded model's part in `messages` (the ones it shows), as a debate's
    page does: "Written by the embedded SmolLM2-135M model (for trying ChaosLM offline)." when it wrote every
    answer and summary, else whose; "" when it wrote none."""
    written = [m for m in messages if m.kind in MODEL_KINDS and m.tokens_in > 0]
    embedded = {m.author: m.data["embedded_model"] for m in written if m.data.get("embedded_model")}
    return marks.written_by(embedded, all_of_it=all(m.data.get("embedded_model") for m in written))


def personas_to_add(room: Room) -> QuerySet[Persona]:
    return Persona.objects.exclude(name__in=room.agents.values_list("name", flat=True))


def rooms_of(owner: Any) -> QuerySet[Room]:
    return Room.objects.filter(owner=owner)


def calls_of(room: Room) -> QuerySet[RoomMessage]:
    """The room's messages that are model calls (agents' answers, summaries): each read a prompt."""
    return room.messages.filter(tokens_in__gt=0)


def usage(room: Room) -> dict[str, Any]:
    """The room usage partial's context: cost and tokens per speaker (an agent, the summarizer) and model. One query."""
    rows = [
        {"name": name, "model": model or "", "cost": total, "tokens_in": t_in, "tokens_out": t_out}
        for (name, model), total, t_in, t_out, _ in totals_by(calls_of(room), "author", "data__model")
    ]
    return {"room_usage": rows, "room_cost": sum((r["cost"] for r in rows), Total())}


def spend(user: Any, since: datetime) -> list[SpendRow]:
    """The user's rooms' calls since `since`, per speaker and model (chaoslm/costs.py: register_spend). One query."""
    calls = RoomMessage.objects.filter(room__owner=user, created_at__gte=since, tokens_in__gt=0)
    return totals_by(calls, "author", "data__model")
