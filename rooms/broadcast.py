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
from rooms.context import ContextMeter
from rooms.models import Room, RoomAgent, RoomMessage
from rooms.table import RoomObserver, RoomTable, load_room, queue_agents

MESSAGES, PENDING = "#messages", "#pending"  # the page's lists: said and kept, and answers waiting to be kept


def message_html(message: RoomMessage) -> str:
    return render_to_string("rooms/partials/message.html", {"message": message})


def message_card(message: RoomMessage) -> str:
    """The message's card, added to (or replacing its old card in) the room's messages."""
    return live.upsert(message_html(message), MESSAGES)


def _push(room: Room, html: str) -> None:
    live.push_sync(live.room_group(room.pk), html)


def push_messages(room: Room, *messages: RoomMessage | None) -> None:
    """From a view: each message's card to every page of the room (None: nothing to show)."""
    _push(room, "".join(message_card(m) for m in messages if m is not None))


def push_status(room: Room) -> None:
    """From a view, after an owner's action: the status line as the database has it now."""
    _push(room, status_now_html(room))


def push_stopped(room: Room) -> None:
    """From a view: the room's generation stopped, so no agent's card says it is writing any more."""
    _push(room, "".join(live.remove(f"think-{a.pk}", PENDING) for a in room.agents.all()))


def push_kept(room: Room, kept: Sequence[RoomMessage]) -> None:
    """From a view: the pending answers the owner decided on leave the pending cards for the room's messages."""
    _push(room, "".join(live.remove(f"msg-{m.pk}", PENDING) + message_card(m) for m in kept))


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


def status_now_html(room: Room) -> str:
    """The status line as it stands now, loaded from the database (the broadcaster keeps its own in memory)."""
    table = load_room(room.pk)
    return status_html(table.room, in_queue_order(table.room, table.agents), table.meter().state())


class RoomBroadcaster(RoomObserver):
    def __init__(self, room_id: int) -> None:
        self.outbox = live.Outbox(live.room_group(room_id), MESSAGES)
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
        self.outbox.html(live.upsert(card, PENDING))
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values())))  # "Mira is writing"

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
            self.outbox.html(live.remove(f"think-{message.agent_id}", MESSAGES))
        into = PENDING if message.kind == RoomMessage.Kind.PENDING else MESSAGES
        # The message's agent is the engine's own object: rendering needs no query, so it runs right here.
        self.outbox.html(live.upsert(message_html(message), into))
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values())))

    def dropped(self, room: Room, agent: RoomAgent) -> None:
        # It has left: the status drawn from the agents loaded before the turn must not list it again.
        self.agents = [other for other in self.agents if other.pk != agent.pk]
        self.thinking.pop(agent.pk, None)
        self.ahead.pop(agent.pk, None)
        self.outbox.html(live.remove(f"think-{agent.pk}", MESSAGES))
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values())))

    async def room_changed(self, room: Room, note: str = "") -> None:
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values()), note=note))

    async def countdown(self, room: Room, seconds: int) -> None:
        self.outbox.html(self._status(room, countdown=seconds))

    async def drain(self) -> None:
        await self.outbox.drain()
