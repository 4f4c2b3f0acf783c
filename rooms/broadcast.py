"""Rendering a room's visual units and pushing them live (the same partials as the page)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.template.loader import render_to_string

from chaoslm import live
from rooms import queue as q
from rooms.engine import RoomObserver, context_state, load_room
from rooms.models import Room, RoomAgent, RoomMessage


def message_html(message: RoomMessage) -> str:
    return render_to_string("rooms/partials/message.html", {"message": message})


def status_context(room: Room, thinking: list[str] | None = None, note: str = "", countdown: int = 0) -> dict[str, Any]:
    table = load_room(room.pk)
    thinking = thinking or []
    order = q.Queue.from_json(room.queue).order
    agents = sorted(table.agents, key=lambda a: order.index(a.pk) if a.pk in order else len(order))
    level, tokens, window = context_state(table)
    return {
        "room": room,
        "agents": agents,
        "thinking": thinking,
        "note": note,
        "countdown": countdown,
        "waiting": max(0, len([a for a in agents if a.participating]) - len(thinking)),
        "context_level": level,
        "context_tokens": tokens,
        "context_window": window,
        "oob": True,
    }


def status_html(room: Room, **extra: Any) -> str:
    return render_to_string("rooms/partials/status.html", status_context(room, **extra))


class RoomBroadcaster(RoomObserver):
    def __init__(self, room_id: int) -> None:
        self.outbox = live.Outbox(live.room_group(room_id), "#messages")
        self.thinking: dict[int, str] = {}

    def started(self, room: Room, agent: RoomAgent) -> None:
        self.thinking[agent.pk] = agent.name
        card = render_to_string("rooms/partials/thinking.html", {"agent": agent})
        self.outbox.html(live.upsert(card, "#pending"))

    def delta(self, room: Room, agent: RoomAgent, text: str) -> None:
        self.outbox.tokens(f"think-{agent.pk}-text", text)

    async def message_saved(self, room: Room, message: RoomMessage) -> None:
        if message.agent_id is not None:
            self.thinking.pop(message.agent_id, None)
            self.outbox.html(live.remove(f"think-{message.agent_id}", "#messages"))
        into = "#pending" if message.kind == RoomMessage.Kind.PENDING else "#messages"
        self.outbox.html(live.upsert(await sync_to_async(message_html)(message), into))
        self.outbox.html(await sync_to_async(status_html)(room, thinking=sorted(self.thinking.values())))

    async def room_changed(self, room: Room, note: str = "") -> None:
        self.outbox.html(await sync_to_async(status_html)(room, thinking=sorted(self.thinking.values()), note=note))

    async def countdown(self, room: Room, seconds: int) -> None:
        self.outbox.html(await sync_to_async(status_html)(room, countdown=seconds))

    async def drain(self) -> None:
        await self.outbox.drain()
