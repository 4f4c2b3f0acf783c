"""Running a room: manual rounds (every agent answers at once, as pending cards) and auto mode's loop.

The loops only: what each agent sees is rooms/context.py, the loaded room rooms/table.py, the hold rooms/hold.py,
saving under row locks rooms/saving.py, the selector rooms/next_speaker.py, summaries rooms/summaries.py.
State lives in the database (the room's mode and queue, its messages), so a reload or a restart
loses nothing. A round or an auto loop holds the room while it runs (`holding`), so however many
processes are asked to run it, one does. The auto loop re-reads the room before every turn, and its
hold renewal notices within CHAOSLM_ROOM_POLL seconds that auto mode was switched off and stops the
generation in flight, wherever it runs (an inline runner also cancels it at once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

from asgiref.sync import sync_to_async
from django.conf import settings

from chaoslm.llm import Callbacks, ChatResult, LLMError, LLMRateLimited, Policy, chat, marks
from rooms import queue as q
from rooms.context import history
from rooms.hold import holding
from rooms.models import Room, RoomAgent, RoomMessage
from rooms.next_speaker import select_next
from rooms.saving import failure_if_present, finish_turn, keep_interrupted, pause, save_round
from rooms.summaries import fold_oldest
from rooms.table import RoomObserver, RoomTable, load_room, queue_agents


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
        partial = await sync_to_async(keep_interrupted)(room, agent, "".join(written), marks.made_by(endpoint))
        if partial is not None:
            await observer.message_saved(room, partial)
        raise


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
    saved = await sync_to_async(save_round)(table, list(zip(agents, results, strict=True)))
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
            folded = await fold_oldest(table, observer)
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
            await pause(table, observer, quiet or "no agent is participating")
            return
        by_id = {a.pk: a for a in table.agents}
        picked = q.was_picked(queue, agents, group, room.turn_order)
        if table.selector is not None and not q.mentioned_next(queue, agents):
            group = await select_next(table, queue, agents, group, observer)
        results = await asyncio.gather(*(_answer(table, by_id[i], observer) for i in group), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, LLMError):
                raise result
        failed = next(((by_id[i], r) for i, r in zip(group, results, strict=True) if isinstance(r, LLMError)), None)
        if failed is not None:
            # The group is asked again on Retry: none of its answers is kept, so none is kept twice.
            agent, error = failed
            failure = await sync_to_async(failure_if_present)(table, agent, error)
            if failure is None:
                # It left the room while it failed: the turn goes on without it (the group is asked again).
                observer.dropped(room, agent)
                continue
            await observer.message_saved(room, failure)
            retry = error.retry_after if isinstance(error, LLMRateLimited) else None
            reason = f"Rate limited. Retry in {retry:.0f}s" if retry else f"{agent.name} failed to respond"
            await pause(table, observer, reason, retry_after=retry)
            return
        answers = [(by_id[i], r) for i, r in zip(group, results, strict=True) if isinstance(r, ChatResult)]
        saved, queue = await sync_to_async(finish_turn)(table, answers, agents, picked, turn.passed)
        _report_dropped(room, [agent for agent, _ in answers], saved, observer)
        for message in saved:
            await observer.message_saved(room, message)
        if q.everyone_skipped(queue, agents):
            await pause(table, observer, "every agent skipped a full round")
            return
        # One push: the page counts the seconds down itself (data-countdown).
        await observer.countdown(room, room.response_delay)
        await asyncio.sleep(room.response_delay)


async def _stopped(table: RoomTable, observer: RoomObserver) -> bool:
    room = table.room
    if q.message_limit_reached(room.messages_since_auto, room.max_messages):
        await pause(table, observer, f"the message limit ({room.max_messages}) was reached")
        return True
    level, tokens, window = context_state(table)
    if level == "critical":
        await pause(table, observer, "Conversation approaching model context limit")
        return True
    if level == "warning":
        await observer.room_changed(room, f"Conversation approaching model context limit ({tokens} of {window} tokens)")
    return False
