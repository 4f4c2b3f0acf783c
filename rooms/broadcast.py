"""Rendering a room's visual units and pushing them live (the same partials as the page).

`RoomBroadcaster` keeps what the status line needs in memory (the agents, the queue order, each agent's
context size), starting from the room the engine loaded and following the messages it is told about, so
a push costs no query and the same however long the conversation is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.template.loader import render_to_string

from chaoslm import live
from rooms import queue as q
from rooms.engine import ContextMeter, RoomObserver, RoomTable, queue_agents
from rooms.models import Room, RoomAgent, RoomMessage


def message_html(message: RoomMessage) -> str:
    return render_to_string("rooms/partials/message.html", {"message": message})


def in_queue_order(room: Room, agents: Sequence[RoomAgent]) -> list[RoomAgent]:
    order = q.Queue.from_json(room.queue).order
    return sorted(agents, key=lambda a: order.index(a.pk) if a.pk in order else len(order))


def status_context(
    room: Room,
    agents: Sequence[RoomAgent],
    context: tuple[str, int, int],
    thinking: Sequence[str] = (),
    note: str = "",
    countdown: int = 0,
    ahead: int = 0,
) -> dict[str, Any]:
    """The status partial's context; `agents` in queue order, `context` as `ContextMeter.state()`."""
    level, tokens, window = context
    upcoming: list[RoomAgent] = []
    queue, by_id = q.Queue.from_json(room.queue), {a.pk: a for a in agents}
    if room.turn_order == Room.TurnOrder.PICK:
        upcoming = [by_id[i] for i in q.upcoming(queue, queue_agents(agents))]
    return {
        "room": room,
        "agents": agents,
        "upcoming": upcoming,
        "passed": [by_id[i] for i in queue.passed if i in by_id] if room.mode == Room.Mode.AUTO else [],
        "thinking": list(thinking),
        "note": note,
        "countdown": countdown,
        "ahead": ahead,
        "waiting": max(0, len([a for a in agents if a.participating]) - len(thinking)),
        "context_level": level,
        "context_tokens": tokens,
        "context_window": window,
        "oob": True,
    }


def status_html(room: Room, agents: Sequence[RoomAgent], context: tuple[str, int, int], **extra: Any) -> str:
    return render_to_string("rooms/partials/status.html", status_context(room, agents, context, **extra))


class RoomBroadcaster(RoomObserver):
    def __init__(self, room_id: int) -> None:
        self.outbox = live.Outbox(live.room_group(room_id), "#messages")
        self.thinking: dict[int, str] = {}
        self.ahead: dict[int, int] = {}  # agent id -> calls ahead of its call, waiting for the embedded model
        self.agents: list[RoomAgent] = []
        self.meter: ContextMeter | None = None

    def loaded(self, table: RoomTable) -> None:
        # The engine reloads the room every turn (and measures it, to stop at the context limit): whatever the
        # owner changed since is in it. The turn's own messages are added to the meter as they are saved.
        self.agents = in_queue_order(table.room, table.agents)
        self.meter = table.meter()

    def _status(self, room: Room, **extra: Any) -> str:
        context = self.meter.state() if self.meter is not None else ("ok", 0, 0)
        # The call nearest the front speaks for the room: it is the next to be answered.
        ahead = min(self.ahead.values(), default=0)
        return status_html(room, self.agents, context, ahead=ahead, **extra)

    def started(self, room: Room, agent: RoomAgent) -> None:
        self.thinking[agent.pk] = agent.name
        card = render_to_string("rooms/partials/thinking.html", {"agent": agent})
        self.outbox.html(live.upsert(card, "#pending"))

    def delta(self, room: Room, agent: RoomAgent, text: str) -> None:
        self.outbox.tokens(f"think-{agent.pk}-text", text)

    def queued(self, room: Room, agent: RoomAgent, ahead: int) -> None:
        if ahead:
            self.ahead[agent.pk] = ahead
        else:
            self.ahead.pop(agent.pk, None)
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values())))

    async def message_saved(self, room: Room, message: RoomMessage) -> None:
        if self.meter is not None:
            self.meter.add(message)
        if message.agent_id is not None:
            self.thinking.pop(message.agent_id, None)
            self.ahead.pop(message.agent_id, None)
            self.outbox.html(live.remove(f"think-{message.agent_id}", "#messages"))
        into = "#pending" if message.kind == RoomMessage.Kind.PENDING else "#messages"
        # The message's agent is the engine's own object: rendering needs no query, so it runs right here.
        self.outbox.html(live.upsert(message_html(message), into))
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values())))

    def dropped(self, room: Room, agent: RoomAgent) -> None:
        # It has left: the status drawn from the agents loaded before the turn must not list it again.
        self.agents = [other for other in self.agents if other.pk != agent.pk]
        self.thinking.pop(agent.pk, None)
        self.ahead.pop(agent.pk, None)
        self.outbox.html(live.remove(f"think-{agent.pk}", "#messages"))
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values())))

    async def room_changed(self, room: Room, note: str = "") -> None:
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values()), note=note))

    async def countdown(self, room: Room, seconds: int) -> None:
        self.outbox.html(self._status(room, countdown=seconds))

    async def drain(self) -> None:
        await self.outbox.drain()
