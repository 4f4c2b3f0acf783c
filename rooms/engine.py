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
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from chaoslm.llm import (
    Callbacks,
    ChatOptions,
    ChatResult,
    Endpoint,
    LLMError,
    LLMRateLimited,
    Policy,
    chat,
)
from chaoslm.llm.messages import append_merged
from chaoslm.personas.calls import LLMSettings
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

    def dropped(self, room: Room, agent: RoomAgent) -> None:
        """The agent left the room while it answered: its answer is not kept."""

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
            q.SKIP_REASON_RULE,
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
    if message.kind == RoomMessage.Kind.SUMMARY:
        return "user", q.SUMMARY_PREFIX + message.content
    if message.agent_id == agent_id:
        return "assistant", message.content
    return "user", f"{message.author}: {message.content}"


def sees(message: RoomMessage, agent: RoomAgent) -> bool:
    """Whether `message` is in `agent`'s context: active, said (not a system line), not folded into a summary,
    addressed to it if a whisper, and said since it joined unless the owner lets it see earlier messages.
    A summary is seen like the oldest message it folds. The one rule for every request."""
    if message.kind == RoomMessage.Kind.SUMMARY:
        first = message.data.get("first", 0)
        return message.active and message.folded_into_id is None and (agent.sees_earlier or first > agent.joined_after)
    if not in_history(message) or message.folded_into_id is not None:
        return False
    if message.agent_id == agent.pk:
        return True
    if message.audience and agent.pk not in message.audience:
        return False
    return agent.sees_earlier or message.pk > agent.joined_after


def _in_order(messages: Sequence[RoomMessage]) -> list[RoomMessage]:
    """The messages as agents read them: each summary where the oldest message it folds was (`data["first"]`),
    whether or not the folded messages were loaded."""
    if not any(m.kind == RoomMessage.Kind.SUMMARY for m in messages):
        return list(messages)

    def place(message: RoomMessage) -> tuple[int, int, int]:
        if message.kind == RoomMessage.Kind.SUMMARY:
            return (message.data.get("first", message.pk), 0, message.pk)
        return (message.pk, 1, message.pk)

    return sorted(messages, key=place)


def history(messages: Sequence[RoomMessage], agent: RoomAgent) -> list[dict[str, str]]:
    """The agent's request: its system prompt, then the messages it sees (`sees`), in order."""
    out: list[dict[str, str]] = [{"role": "system", "content": agent.system_prompt}]

    for message in _in_order(messages):
        if sees(message, agent):
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
        self.agents = {a.pk: a for a in agents}
        self.totals = {a.pk: 3 + _term(len(a.system_prompt)) for a in agents}
        self.last = {a.pk: ("system", len(a.system_prompt)) for a in agents}  # the role and length of the last entry
        for message in _in_order(messages):
            self.add(message)

    def add(self, message: RoomMessage) -> None:
        if not in_history(message) and message.kind != RoomMessage.Kind.SUMMARY:
            return
        for agent_id, (last_role, last_length) in self.last.items():
            if not sees(message, self.agents[agent_id]):
                continue
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
    # A selector room's selector: the endpoint and options of its persona, or of the default model.
    selector: tuple[Endpoint, ChatOptions] | None = None
    # A summarising room's summarizer, likewise.
    summarizer: tuple[Endpoint, ChatOptions] | None = None
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
    selector = None
    if room.turn_order == Room.TurnOrder.SELECTOR:
        persona = room.selector
        llm = LLMSettings.of_persona(persona) if persona is not None else LLMSettings()
        selector = (llm.endpoint(), llm.options())
    summarizer = None
    if room.memory == Room.Memory.SUMMARIZE:
        persona = room.summarizer
        llm = LLMSettings.of_persona(persona) if persona is not None else LLMSettings()
        summarizer = (llm.endpoint(), llm.options())
    return RoomTable(
        room=room,
        agents=agents,
        # Only what an agent may see (`sees`): said, active, not folded. With summaries on, that stays within
        # a context window however long the room grows, and so does a turn's work.
        messages=list(room.messages.filter(active=True, folded_into__isnull=True, kind__in=SEEABLE)),
        endpoints={a.pk: a.llm_settings.endpoint() for a in agents},
        selector=selector,
        summarizer=summarizer,
    )


SEEABLE = [RoomMessage.Kind.USER, RoomMessage.Kind.AGENT, RoomMessage.Kind.SUMMARY]


def queue_agents(agents: Sequence[RoomAgent]) -> list[q.Agent]:
    return [
        q.Agent(a.pk, a.name, a.participating, role=a.role, candidate=a.candidate, talkativeness=a.talkativeness)
        for a in agents
    ]


async def _answer(table: RoomTable, agent: RoomAgent, observer: RoomObserver) -> ChatResult:
    room = table.room
    endpoint = table.endpoints[agent.pk]
    options = agent.llm_settings.options()
    # Rooms never sit out a rate limit: they pause and show the countdown instead.
    policy = Policy.from_settings(timeout=float(room.max_wait), wait_on_rate_limit=False)
    observer.started(room, agent)
    written: list[str] = []

    def delta(text: str) -> None:
        written.append(text)
        observer.delta(room, agent, text)

    try:
        return await chat(
            endpoint,
            history(table.messages, agent),
            options,
            policy=policy,
            callbacks=Callbacks(on_delta=delta, on_queued=lambda ahead: observer.queued(room, agent, ahead)),
        )
    except asyncio.CancelledError:
        # Stopped. If the owner took the floor (an interrupt), what was written is kept, inactive and marked.
        partial = await sync_to_async(_keep_interrupted)(room, agent, "".join(written))
        if partial is not None:
            await observer.message_saved(room, partial)
        raise


def _keep_interrupted(room: Room, agent: RoomAgent, text: str) -> RoomMessage | None:
    # The owner changed the room under the engine: the status pushed with the partial is drawn from this object,
    # and a stale "auto" pushed after the owner's "manual" would close the input the interrupt has just opened.
    room.refresh_from_db(fields=["mode", "interrupted", "pause_reason", "retry_at"])
    if not text.strip() or not room.interrupted:
        return None
    with transaction.atomic():
        if not lock_present([agent]):
            return None
        return _save(room, RoomMessage.Kind.AGENT, text, agent, active=False, data={"interrupted": True})


def lock_present(agents: Iterable[RoomAgent]) -> set[int]:
    """The ids of those agents still in the room, their rows locked until the transaction ends. An agent the owner
    removed while it answered has its answer dropped (its row gone, the message could not point at it); one being
    removed waits for the answer to be saved, then keeps it as it keeps the agent's earlier messages
    (services.remove_agent locks the row with it first)."""
    mine = RoomAgent.objects.select_for_update().filter(pk__in=[agent.pk for agent in agents])
    return set(mine.values_list("pk", flat=True))


def _save(room: Room, kind: str, content: str, agent: RoomAgent | None = None, **fields: Any) -> RoomMessage:
    author = agent.name if agent else fields.pop("author", "")
    return RoomMessage.objects.create(room=room, kind=kind, agent=agent, author=author, content=content, **fields)


def _save_skip(room: Room, agent: RoomAgent, reason: str) -> RoomMessage:
    return _save(room, RoomMessage.Kind.SYSTEM, q.skip_line(agent.label, reason), agent, active=False)


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


def _failure_if_present(table: RoomTable, agent: RoomAgent, error: LLMError) -> RoomMessage | None:
    """The agent's failure line; None if it has left the room (there is no one to retry)."""
    with transaction.atomic():
        return _failure(table, agent, error) if lock_present([agent]) else None


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


def addressed(messages: Sequence[RoomMessage], agent: RoomAgent) -> bool:
    """Whether the person's latest message is for `agent`: a whisper asks only the agents it is addressed to."""
    latest = next((m for m in reversed(messages) if m.kind == RoomMessage.Kind.USER), None)
    return latest is None or not latest.audience or agent.pk in latest.audience


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
    addressed_to = [a for a in table.agents if a.participating and addressed(table.messages, a)]
    agents = await sync_to_async(_unanswered)(room_id, addressed_to)
    results = await asyncio.gather(*(_answer(table, a, observer) for a in agents), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, LLMError):
            raise result
    saved = await sync_to_async(_save_round)(table, list(zip(agents, results, strict=True)))
    _report_dropped(table.room, agents, saved, observer)
    for message in saved:
        await observer.message_saved(table.room, message)
    return saved


def _report_dropped(
    room: Room, agents: Iterable[RoomAgent], saved: Sequence[RoomMessage], observer: RoomObserver
) -> None:
    """Every answer saved names its agent: those of `agents` with none left the room while they answered."""
    kept = {message.agent_id for message in saved}
    for agent in agents:
        if agent.pk not in kept:
            observer.dropped(room, agent)


def _unanswered(room_id: int, agents: Sequence[RoomAgent]) -> list[RoomAgent]:
    """Those of `agents` with no answer yet to the person's latest message (a failure is no answer: Retry asks
    it again). A round run twice (a redelivered task) or retried asks nobody a second time."""
    latest = RoomMessage.objects.filter(room_id=room_id, kind=RoomMessage.Kind.USER).order_by("-pk").first()
    if latest is None:
        return list(agents)
    since = RoomMessage.objects.filter(room_id=room_id, pk__gt=latest.pk, agent__isnull=False)
    answered = set(since.exclude(kind=RoomMessage.Kind.ERROR).values_list("agent_id", flat=True))
    return [a for a in agents if a.pk not in answered]


def _save_round(
    table: RoomTable, outcomes: Sequence[tuple[RoomAgent, ChatResult | BaseException]]
) -> list[RoomMessage]:
    """A round's answers as pending cards (skips and failures as their lines), all in one transaction."""
    saved: list[RoomMessage] = []
    with transaction.atomic():
        present = lock_present(agent for agent, _ in outcomes)
        for agent, result in outcomes:
            if agent.pk not in present:
                continue
            if isinstance(result, LLMError):
                saved.append(_failure(table, agent, result))
            elif isinstance(result, ChatResult) and (reason := q.skip_reason(result.text)) is not None:
                saved.append(_save_skip(table.room, agent, reason))
            elif isinstance(result, ChatResult):
                fields = _reply_fields(table, agent, result)
                saved.append(_save(table.room, RoomMessage.Kind.PENDING, agent=agent, **fields))
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
        if table.summarizer is not None and context_state(table)[0] != "ok":
            folded = await _fold(table, observer)
            if folded is None:
                return
            if folded:
                continue  # measured again, with the summary in place of what it folds
        if await _stopped(table, observer):
            return
        agents = queue_agents(table.agents)
        queue = q.Queue.from_json(room.queue)
        turn = q.next_turn(queue, agents, room.turn_order, room.seed)
        group = turn.group
        if not group:
            quiet = "every agent is quiet (talkativeness 0): @mention one" if turn.passed else ""
            await _pause(table, observer, quiet or "no agent is participating")
            return
        by_id = {a.pk: a for a in table.agents}
        picked = q.was_picked(queue, agents, group, room.turn_order)
        if table.selector is not None and not q.mentioned_next(queue, agents):
            group = await _select(table, queue, agents, group, observer)
        results = await asyncio.gather(*(_answer(table, by_id[i], observer) for i in group), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, LLMError):
                raise result
        failed = next(((by_id[i], r) for i, r in zip(group, results, strict=True) if isinstance(r, LLMError)), None)
        if failed is not None:
            # The group is asked again on Retry: none of its answers is kept, so none is kept twice.
            agent, error = failed
            failure = await sync_to_async(_failure_if_present)(table, agent, error)
            if failure is None:
                # It left the room while it failed: the turn goes on without it (the group is asked again).
                observer.dropped(room, agent)
                continue
            await observer.message_saved(room, failure)
            retry = error.retry_after if isinstance(error, LLMRateLimited) else None
            reason = f"Rate limited. Retry in {retry:.0f}s" if retry else f"{agent.name} failed to respond"
            await _pause(table, observer, reason, retry_after=retry)
            return
        answers = [(by_id[i], r) for i, r in zip(group, results, strict=True) if isinstance(r, ChatResult)]
        saved, queue = await sync_to_async(_finish_turn)(table, answers, agents, picked, turn.passed)
        _report_dropped(room, [agent for agent, _ in answers], saved, observer)
        for message in saved:
            await observer.message_saved(room, message)
        if q.everyone_skipped(queue, agents):
            await _pause(table, observer, "every agent skipped a full round")
            return
        # One push: the page counts the seconds down itself (data-countdown).
        await observer.countdown(room, room.response_delay)
        await asyncio.sleep(room.response_delay)


def _finish_turn(
    table: RoomTable,
    answers: Sequence[tuple[RoomAgent, ChatResult]],
    agents: Sequence[q.Agent],
    picked: bool,
    passed: Sequence[int],
) -> tuple[list[RoomMessage], q.Queue]:
    """Save a turn's answers and move the queue on past them, in one transaction: a worker killed at any point
    leaves either the whole turn or none of it, so the turn run again never has an agent answer twice."""
    room = table.room
    saved, skipped, mentioned = [], [], []
    with transaction.atomic():
        present = lock_present(agent for agent, _ in answers)
        answers = [(agent, result) for agent, result in answers if agent.pk in present]
        for agent, result in answers:
            if (reason := q.skip_reason(result.text)) is not None:
                skipped.append(agent.pk)
                saved.append(_save_skip(room, agent, reason))
            else:
                message = _save(room, RoomMessage.Kind.AGENT, agent=agent, **_reply_fields(table, agent, result))
                mentioned += q.find_mentions(message.content, agents, author_id=agent.pk)
                room.messages_since_auto += 1
                saved.append(message)
        group = [agent.pk for agent, _ in answers]
        queue = _advance_queue(room, group, skipped, mentioned, picked, passed)
    return saved, queue


def _advance_queue(
    room: Room,
    group: Sequence[int],
    skipped: Sequence[int],
    mentioned: Sequence[int],
    picked: bool,
    passed: Sequence[int],
) -> q.Queue:
    """Move the stored queue on past `group` (change_queue), saving the turn's `messages_since_auto` with it."""
    return change_queue(
        room,
        lambda stored: q.with_mentions(q.advance(stored, group, skipped, picked=picked, passed=passed), mentioned),
        also=["messages_since_auto"],
    )


def change_queue(room: Room, change: Callable[[q.Queue], q.Queue], *, also: Sequence[str] = ()) -> q.Queue:
    """Change the stored queue, read under its row lock, and save it with the fields `also` the caller set on
    `room`. The stored one, not `room`'s copy: the engine moves the queue on past each turn while the owner's
    request changes it (an agent added or removed, one picked or @mentioned), and a copy loaded before the other
    wrote would undo it (a turn given twice, a removed agent back in the queue)."""
    with transaction.atomic():
        stored = Room.objects.select_for_update().only("queue").get(pk=room.pk)
        queue = change(q.Queue.from_json(stored.queue))
        room.queue = queue.to_json()
        room.save(update_fields=["queue", *also, "updated_at"])
    return queue


def _announced(room: Room) -> tuple[int, ...]:
    """Who the room's newest message, a selector's "Next:" line, named: its turn was never saved (the worker died
    and the task came again), so that turn is taken without asking or announcing it twice."""
    newest = room.messages.order_by("-pk").only("kind", "data").first()
    if newest is None or newest.kind != RoomMessage.Kind.SYSTEM:
        return ()
    return tuple(newest.data.get("next", ()))


async def _select(
    table: RoomTable, queue: q.Queue, agents: list[q.Agent], fallback: tuple[int, ...], observer: RoomObserver
) -> tuple[int, ...]:
    """Ask the selector who speaks next; its choice, or `fallback` (round robin) when it names nobody who may.

    Either way a system line says who is next and why.
    """
    room, names = table.room, {a.id: a.name for a in agents}
    candidates = q.selector_candidates(queue, agents, room.selector_repeat)
    announced = await sync_to_async(_announced)(room)
    if announced and set(announced) <= {a.id for a in candidates} | set(fallback):
        return announced
    group, data = fallback, {}
    if not candidates:
        line = q.fallback_line(names[fallback[0]], "no agent may be named")
    else:
        just_spoke = "" if room.selector_repeat else ", ".join(names[i] for i in queue.last if i in names)
        said = (m for m in reversed(table.messages) if in_history(m) and not m.audience)  # never a whisper
        newest = itertools.islice(said, q.SELECTOR_WINDOW)
        recent = [(m.author, m.content) for m in newest][::-1]
        assert table.selector is not None
        endpoint, options = table.selector
        policy = Policy.from_settings(timeout=float(room.max_wait), wait_on_rate_limit=False)
        try:
            result = await chat(endpoint, q.selector_messages(recent, candidates, just_spoke), options, policy=policy)
        except LLMError as error:
            line = q.fallback_line(names[fallback[0]], f"the selector failed: {error}")
        else:
            data = {"selector_answer": result.text[:500]}
            selection = q.parse_selection(result.text, candidates)
            if selection is None:
                answer = " ".join(result.text.split())[:100]
                line = q.fallback_line(names[fallback[0]], f'the selector named nobody who may speak ("{answer}")')
            else:
                group = (selection.agent_id,)
                line = q.selection_line(names[selection.agent_id], selection.reason)
    data["next"] = list(group)
    message = await sync_to_async(_save)(room, RoomMessage.Kind.SYSTEM, line, active=False, data=data)
    await observer.message_saved(room, message)
    return group


def _save_summary(room: Room, fold: Sequence[RoomMessage], text: str, model: str) -> RoomMessage:
    # A summary reads where the oldest message under it was (`_in_order`), even when it folds an earlier summary.
    first = min(m.data.get("first", m.pk) if m.kind == RoomMessage.Kind.SUMMARY else m.pk for m in fold)
    with transaction.atomic():
        summary = _save(
            room,
            RoomMessage.Kind.SUMMARY,
            text,
            author="Summary",
            data={"first": first, "folded": len(fold), "model": model},
        )
        RoomMessage.objects.filter(pk__in=[m.pk for m in fold]).update(folded_into=summary)
    return summary


async def _fold(table: RoomTable, observer: RoomObserver) -> bool | None:
    """Fold the oldest half of what agents see into one summary by the room's summarizer. True if it did;
    False if there is too little to fold; None if the summarizer failed (auto mode is then paused)."""
    room = table.room
    foldable = [
        m
        for m in _in_order(table.messages)
        if m.active
        and m.folded_into_id is None
        and not m.audience  # a whisper stays its audience's alone: it is never summarised for the others
        and (in_history(m) or m.kind == RoomMessage.Kind.SUMMARY)
    ]
    ids = set(q.to_fold([m.pk for m in foldable]))
    if not ids:
        return False
    fold = [m for m in foldable if m.pk in ids]
    lines = [("" if m.kind == RoomMessage.Kind.SUMMARY else m.author, m.content) for m in fold]
    assert table.summarizer is not None
    endpoint, options = table.summarizer
    policy = Policy.from_settings(timeout=float(room.max_wait), wait_on_rate_limit=False)
    try:
        result = await chat(endpoint, q.summarizer_messages(lines), options, policy=policy)
    except LLMError as error:
        await _pause(table, observer, f"the summarizer failed: {error}")
        return None
    summary = await sync_to_async(_save_summary)(room, fold, result.text.strip(), result.model)
    await observer.message_saved(room, summary)
    agents = {a.pk: a for a in table.agents}
    for message in fold:
        message.folded_into_id = summary.pk
        if message.agent_id is not None:
            message.agent = agents[message.agent_id]  # the card draws it with no query
        await observer.message_saved(room, message)  # its card now says it was summarised
    return True


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
