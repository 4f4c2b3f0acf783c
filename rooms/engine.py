"""Running a room: manual rounds (every agent answers at once, as pending cards) and auto mode.

State lives in the database (the room's mode and queue, its messages), so a reload or a restart
loses nothing. A round or an auto loop holds the room while it runs (`holding`), so however many
processes are asked to run it, one does. The auto loop re-reads the room before every turn, and its
hold renewal notices within CHAOSLM_ROOM_POLL seconds that auto mode was switched off and stops the
generation in flight, wherever it runs (an inline runner also cancels it at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from chaoslm.llm import (
    Callbacks,
    ChatResult,
    Endpoint,
    LLMError,
    LLMRateLimited,
    Policy,
    chat,
)
from chaoslm.llm.messages import append_merged
from rooms import queue as q
from rooms.models import Room, RoomAgent, RoomMessage

logger = logging.getLogger("chaoslm.rooms")


class RoomObserver:
    """Receives what happens in a room; the defaults do nothing. Token hooks must only buffer."""

    def started(self, room: Room, agent: RoomAgent) -> None:
        pass

    def delta(self, room: Room, agent: RoomAgent, text: str) -> None:
        pass

    def queued(self, room: Room, agent: RoomAgent, ahead: int) -> None:
        """The agent's call waits for the embedded model, `ahead` calls before it; 0 once it is being answered."""

    async def message_saved(self, room: Room, message: RoomMessage) -> None:
        pass

    async def room_changed(self, room: Room, note: str = "") -> None:
        pass

    async def countdown(self, room: Room, seconds: int) -> None:
        pass

    def loaded(self, table: RoomTable) -> None:
        """The engine (re)loaded the room: the state its next pushes start from."""

    async def drain(self) -> None:
        pass


def agent_prompt(persona_prompt: str, name: str) -> str:
    """The persona, the spec's SKIP rule, and a line that keeps each agent to its own voice."""
    return "\n\n".join(
        p
        for p in (
            persona_prompt,
            q.SKIP_RULE,
            f"You are {name}, one participant in a group chat. Write only your own message; "
            "never write lines for the other participants.",
        )
        if p
    )


YOUR_TURN = "(Your turn.)"


def in_history(message: RoomMessage) -> bool:
    return message.active and message.kind in (RoomMessage.Kind.USER, RoomMessage.Kind.AGENT)


def _entry(message: RoomMessage, agent_id: int) -> tuple[str, str]:
    """How `message` reads in the request of the agent `agent_id`: (role, content)."""
    if message.agent_id == agent_id:
        return "assistant", message.content
    return "user", f"{message.author}: {message.content}"


def history(messages: Sequence[RoomMessage], agent: RoomAgent) -> list[dict[str, str]]:
    """The agent's request: its system prompt, then the active user and agent messages, in order."""
    out: list[dict[str, str]] = [{"role": "system", "content": agent.system_prompt}]

    for message in messages:
        if in_history(message):
            append_merged(out, *_entry(message, agent.pk))
    if out[-1]["role"] != "user":
        append_merged(out, "user", YOUR_TURN)
    return out


def _term(length: int) -> int:
    # One message's share of gateway.estimate_tokens.
    return 4 + length // 4


class ContextMeter:
    """Each agent's estimated request size, as `estimate_tokens(history(messages, agent))`, kept a message at a time.

    It keeps only lengths: adding a message costs the same however long the conversation is.
    """

    def __init__(self, agents: Sequence[RoomAgent], windows: dict[int, int], messages: Sequence[RoomMessage]) -> None:
        self.windows = windows
        self.totals = {a.pk: 3 + _term(len(a.system_prompt)) for a in agents}
        self.last = {a.pk: ("system", len(a.system_prompt)) for a in agents}  # the role and length of the last entry
        for message in messages:
            self.add(message)

    def add(self, message: RoomMessage) -> None:
        if not in_history(message):
            return
        for agent_id, (last_role, last_length) in self.last.items():
            role, content = _entry(message, agent_id)
            if role == last_role:  # append_merged: joined to the last entry with a blank line
                merged = last_length + 2 + len(content)
                self.totals[agent_id] += _term(merged) - _term(last_length)
                self.last[agent_id] = (role, merged)
            else:
                self.totals[agent_id] += _term(len(content))
                self.last[agent_id] = (role, len(content))

    def tokens(self, agent_id: int) -> int:
        last_role, _ = self.last[agent_id]
        return self.totals[agent_id] + (0 if last_role == "user" else _term(len(YOUR_TURN)))

    def state(self) -> tuple[str, int, int]:
        """The fullest agent's context: (level, estimated tokens, window)."""
        worst = ("ok", 0, 0)
        for agent_id in self.totals:
            tokens, window = self.tokens(agent_id), self.windows[agent_id]
            if tokens / max(window, 1) > worst[1] / max(worst[2], 1):
                worst = (q.context_level(tokens, window), tokens, window)
        return worst


@dataclass
class RoomTable:
    """A room as one turn sees it: the room, its agents, its history and their endpoints."""

    room: Room
    agents: list[RoomAgent]
    messages: list[RoomMessage]
    endpoints: dict[int, Endpoint]
    _meter: ContextMeter | None = None

    def meter(self) -> ContextMeter:
        """The agents' context sizes, measured once a load; the broadcaster then adds the turn's messages."""
        if self._meter is None:
            windows = {agent_id: endpoint.context_window for agent_id, endpoint in self.endpoints.items()}
            self._meter = ContextMeter(self.agents, windows, self.messages)
        return self._meter


def load_room(room_id: int) -> RoomTable:
    room = Room.objects.get(pk=room_id)
    agents = list(room.agents.all())
    return RoomTable(
        room=room,
        agents=agents,
        messages=list(room.messages.exclude(kind=RoomMessage.Kind.PENDING)),
        endpoints={a.pk: a.llm_settings.endpoint() for a in agents},
    )


def queue_agents(agents: Sequence[RoomAgent]) -> list[q.Agent]:
    return [q.Agent(a.pk, a.name, a.participating) for a in agents]


async def _answer(table: RoomTable, agent: RoomAgent, observer: RoomObserver) -> ChatResult:
    room = table.room
    endpoint = table.endpoints[agent.pk]
    options = agent.llm_settings.options()
    # Rooms never sit out a rate limit: they pause and show the countdown instead.
    policy = Policy.from_settings(timeout=float(room.max_wait), wait_on_rate_limit=False)
    observer.started(room, agent)
    return await chat(
        endpoint,
        history(table.messages, agent),
        options,
        policy=policy,
        callbacks=Callbacks(
            on_delta=lambda text: observer.delta(room, agent, text),
            on_queued=lambda ahead: observer.queued(room, agent, ahead),
        ),
    )


def _save(room: Room, kind: str, content: str, agent: RoomAgent | None = None, **fields: Any) -> RoomMessage:
    author = agent.name if agent else fields.pop("author", "")
    return RoomMessage.objects.create(room=room, kind=kind, agent=agent, author=author, content=content, **fields)


def _reply_fields(table: RoomTable, agent: RoomAgent, result: ChatResult) -> dict[str, Any]:
    others = [a.name for a in table.agents if a.pk != agent.pk] + [m.author for m in table.messages if m.kind == "user"]
    guarded = q.guard_speaker(result.text, agent.name, others)
    data: dict[str, Any] = {"model": result.model}
    if guarded.cut_at:
        data["speaker_guard"] = f"Cut where it began writing {guarded.cut_at}'s lines."
    return {
        "content": guarded.text,
        "data": data,
        "tokens_in": result.prompt_tokens,
        "tokens_out": result.completion_tokens,
    }


def _failure(table: RoomTable, agent: RoomAgent, error: LLMError) -> RoomMessage:
    data: dict[str, Any] = {"retry_agent": agent.pk}
    if isinstance(error, LLMRateLimited):
        data["retry_after"] = error.retry_after
    return _save(
        table.room, RoomMessage.Kind.ERROR, f"⚠️ {agent.name} Failed to respond: {error}", agent, data=data, active=False
    )


def _stop_auto(room: Room, reason: str, *, retry_after: float | None = None) -> RoomMessage:
    room.mode = Room.Mode.MANUAL
    room.pause_reason = reason
    room.retry_at = timezone.now() + timedelta(seconds=retry_after) if retry_after else None
    room.save(update_fields=["mode", "pause_reason", "retry_at", "updated_at"])
    return _save(room, RoomMessage.Kind.SYSTEM, f"Conversation paused: {reason}", active=False)


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


async def manual_round(room_id: int, observer: RoomObserver | None = None) -> list[RoomMessage]:
    """Every participating agent answers at once; the answers wait as pending cards for the person.

    If the room is held (an auto loop still stopping, a round already running), the round waits for it.
    """
    observer = observer or RoomObserver()
    try:
        async with holding(room_id, wait=settings.CHAOSLM_ROOM_HOLD) as held:
            return await _round(room_id, observer) if held else []
    finally:
        await observer.drain()


async def _round(room_id: int, observer: RoomObserver) -> list[RoomMessage]:
    table = await sync_to_async(load_room)(room_id)
    observer.loaded(table)
    agents = [a for a in table.agents if a.participating]
    results = await asyncio.gather(*(_answer(table, a, observer) for a in agents), return_exceptions=True)
    saved = []
    for agent, result in zip(agents, results, strict=True):
        if isinstance(result, LLMError):
            message = await sync_to_async(_failure)(table, agent, result)
        elif isinstance(result, BaseException):
            raise result
        elif q.is_skip(result.text):
            message = await sync_to_async(_save)(
                table.room, "system", f"[{agent.label}] skipped their turn", agent, active=False
            )
        else:
            message = await sync_to_async(_save)(
                table.room, RoomMessage.Kind.PENDING, agent=agent, **_reply_fields(table, agent, result)
            )
        saved.append(message)
        await observer.message_saved(table.room, message)
    return saved


def context_state(table: RoomTable) -> tuple[str, int, int]:
    """The fullest agent's context: (level, estimated tokens, window)."""
    return table.meter().state()


async def auto_loop(room_id: int, observer: RoomObserver | None = None) -> None:
    """Turns in queue order until the room leaves auto mode or a stop condition holds.

    Does nothing if another loop or round holds the room: one loop a room, whoever asked.
    """
    observer = observer or RoomObserver()
    try:
        async with holding(room_id, only_in_auto=True) as held:
            if held:
                await _auto_turns(room_id, observer)
    finally:
        await observer.drain()


async def _auto_turns(room_id: int, observer: RoomObserver) -> None:
    while True:
        table = await sync_to_async(load_room)(room_id)
        observer.loaded(table)
        room = table.room
        if room.mode != Room.Mode.AUTO:
            return
        if await _stopped(table, observer):
            return
        agents = queue_agents(table.agents)
        queue = q.Queue.from_json(room.queue)
        group = q.next_group(queue, agents)
        if not group:
            await _pause(table, observer, "no agent is participating")
            return
        by_id = {a.pk: a for a in table.agents}
        results = await asyncio.gather(*(_answer(table, by_id[i], observer) for i in group), return_exceptions=True)
        skipped, mentioned = [], []
        for agent_id, result in zip(group, results, strict=True):
            agent = by_id[agent_id]
            if isinstance(result, LLMError):
                await observer.message_saved(room, await sync_to_async(_failure)(table, agent, result))
                retry = result.retry_after if isinstance(result, LLMRateLimited) else None
                reason = f"Rate limited. Retry in {retry:.0f}s" if retry else f"{agent.name} failed to respond"
                await _pause(table, observer, reason, retry_after=retry)
                return
            if isinstance(result, BaseException):
                raise result
            if q.is_skip(result.text):
                skipped.append(agent_id)
                message = await sync_to_async(_save)(
                    room, "system", f"[{agent.label}] skipped their turn", agent, active=False
                )
            else:
                fields = _reply_fields(table, agent, result)
                message = await sync_to_async(_save)(room, RoomMessage.Kind.AGENT, agent=agent, **fields)
                mentioned += q.find_mentions(message.content, agents, author_id=agent_id)
                room.messages_since_auto += 1
            await observer.message_saved(room, message)
        queue = q.with_mentions(q.advance(queue, group, skipped), mentioned)
        room.queue = queue.to_json()
        await sync_to_async(room.save)(update_fields=["queue", "messages_since_auto", "updated_at"])
        if q.everyone_skipped(queue, agents):
            await _pause(table, observer, "every agent skipped a full round")
            return
        # One push: the page counts the seconds down itself (data-countdown).
        await observer.countdown(room, room.response_delay)
        await asyncio.sleep(room.response_delay)


async def _stopped(table: RoomTable, observer: RoomObserver) -> bool:
    room = table.room
    if q.message_limit_reached(room.messages_since_auto, room.max_messages):
        await _pause(table, observer, f"the message limit ({room.max_messages}) was reached")
        return True
    level, tokens, window = context_state(table)
    if level == "critical":
        await _pause(table, observer, "Conversation approaching model context limit")
        return True
    if level == "warning":
        await observer.room_changed(room, f"Conversation approaching model context limit ({tokens} of {window} tokens)")
    return False


async def _pause(table: RoomTable, observer: RoomObserver, reason: str, retry_after: float | None = None) -> None:
    message = await sync_to_async(_stop_auto)(table.room, reason, retry_after=retry_after)
    await observer.message_saved(table.room, message)
    await observer.room_changed(table.room)
