"""Rendering a room's visual units and pushing them live (the same partials as the page).

`RoomBroadcaster` keeps what the status line needs in memory (the agents, the queue order, each agent's
context size), starting from the room the engine loaded and following the messages it is told about, so
a push costs no query and the same however long the conversation is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Q
from django.template.loader import render_to_string

from chaoslm import live
from rooms import queue as q
from rooms.context import ContextMeter
from rooms.models import Room, RoomAgent, RoomMessage
from rooms.table import RoomObserver, RoomTable, load_room, queue_agents

MESSAGES, PENDING = "#messages", "#pending"  # the page's lists: said and kept, and answers waiting to be kept


def _text_of(agent_id: int) -> str:
    """The element of an agent's card being written that its text streams into (rooms/partials/thinking.html)."""
    return f"think-{agent_id}-text"


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
    """From a view: the room's generation stopped, so no agent's card says it is writing any more, nor does a
    (re)connecting page's catch-up."""
    live.forget_writing(live.room_group(room.pk))
    _push(room, "".join(live.remove(f"think-{a.pk}", PENDING) for a in room.agents.all()))


def push_kept(room: Room, kept: Sequence[RoomMessage]) -> None:
    """From a view: the pending answers the owner decided on leave the pending cards for the room's messages."""
    _push(room, "".join(live.remove(f"msg-{m.pk}", PENDING) + message_card(m) for m in kept))


def catch_up_html(room_id: int, since_id: int, *, with_whispers: bool) -> str:
    """What a page that (re)connects is missing: the status line, the messages after `since_id` (the newest the
    page shows), the pending answers as they stand, and the answers being written with their text so far.

    The page gives as `since_id` one less than its oldest pending answer when it shows one (static/js/chaoslm.js):
    kept meanwhile, that answer has moved to the messages, and comes again there."""
    room = Room.objects.get(pk=room_id)
    messages, pending = _messages_after(room, since_id, with_whispers=with_whispers)
    pending_html = "".join(message_html(m) for m in pending)
    return "".join(
        [
            status_now_html(room),
            live.upsert("".join(message_html(m) for m in messages), MESSAGES) if messages else "",
            # The whole list, replaced: an answer kept or dropped while the page was away leaves it.
            f'<section id="pending" class="pending" hx-swap-oob="true">{pending_html}</section>',
            live.writing_html(live.room_group(room_id), PENDING),
        ]
    )


def _messages_after(room: Room, after: int, *, with_whispers: bool) -> tuple[list[RoomMessage], list[RoomMessage]]:
    """The room's messages after `after` and all its pending answers, in order, as the page lists them
    (rooms/selectors.page_messages); whispers only `with_whispers` (the owner's)."""
    pending_kind = RoomMessage.Kind.PENDING
    messages = room.messages.select_related("agent").filter(Q(pk__gt=after) | Q(kind=pending_kind)).order_by("pk")
    shown = [m for m in messages if with_whispers or not m.audience]
    return [m for m in shown if m.kind != pending_kind], [m for m in shown if m.kind == pending_kind]


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
        # Anchored on the pending list, where the cards being written go (`begin`), and where a catch-up puts them.
        self.outbox = live.Outbox(live.room_group(room_id), PENDING)
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
        # Kept with its text for the catch-ups, and its text streamed with offsets (chaoslm/live.py).
        self.outbox.begin(_text_of(agent.pk), card)
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values())))  # "Mira is writing"

    def delta(self, room: Room, agent: RoomAgent, text: str) -> None:
        self.outbox.tokens(_text_of(agent.pk), text)

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
            self.outbox.end(_text_of(message.agent_id))
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
        self.outbox.end(_text_of(agent.pk))
        self.outbox.html(live.remove(f"think-{agent.pk}", MESSAGES))
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values())))

    async def room_changed(self, room: Room, note: str = "") -> None:
        self.outbox.html(self._status(room, thinking=sorted(self.thinking.values()), note=note))

    async def countdown(self, room: Room, seconds: int) -> None:
        self.outbox.html(self._status(room, countdown=seconds))

    async def drain(self) -> None:
        await self.outbox.drain()
