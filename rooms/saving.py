"""Saving what a room's turns produce, under the agents' and the queue's row locks: answers, skips, failures, pauses
and the queue moved on, each turn in one transaction, so a worker killed at any point leaves all of a turn or none."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.utils import timezone

from chaoslm.llm import ChatResult, LLMError, LLMRateLimited, marks
from rooms import queue as q
from rooms.models import Room, RoomAgent, RoomMessage
from rooms.table import RoomObserver, RoomTable


def keep_interrupted(room: Room, agent: RoomAgent, text: str, made_by: dict[str, str]) -> RoomMessage | None:
    # The owner changed the room under the engine: the status pushed with the partial is drawn from this object,
    # and a stale "auto" pushed after the owner's "manual" would close the input the interrupt has just opened.
    room.refresh_from_db(fields=["mode", "interrupted", "pause_reason", "retry_at"])
    if not text.strip() or not room.interrupted:
        return None
    with transaction.atomic():
        if not lock_present([agent]):
            return None
        return save(room, RoomMessage.Kind.AGENT, text, agent, active=False, data={"interrupted": True, **made_by})


def lock_present(agents: Iterable[RoomAgent]) -> set[int]:
    """The ids of those agents still in the room, their rows locked until the transaction ends. An agent the owner
    removed while it answered has its answer dropped (its row gone, the message could not point at it); one being
    removed waits for the answer to be saved, then keeps it as it keeps the agent's earlier messages
    (services.remove_agent locks the row with it first)."""
    mine = RoomAgent.objects.select_for_update().filter(pk__in=[agent.pk for agent in agents])
    return set(mine.values_list("pk", flat=True))


def save(room: Room, kind: str, content: str, agent: RoomAgent | None = None, **fields: Any) -> RoomMessage:
    author = agent.name if agent else fields.pop("author", "")
    return RoomMessage.objects.create(room=room, kind=kind, agent=agent, author=author, content=content, **fields)


def save_skip(room: Room, agent: RoomAgent, reason: str) -> RoomMessage:
    return save(room, RoomMessage.Kind.SYSTEM, q.skip_line(agent.label, reason), agent, active=False)


def guarded(table: RoomTable, agent: RoomAgent, result: ChatResult) -> q.Guarded:
    """The reply cut where it starts writing another participant's (an agent's or a person's) lines."""
    others = [a.name for a in table.agents if a.pk != agent.pk] + [m.author for m in table.messages if m.kind == "user"]
    return q.guard_speaker(result.text, agent.name, others)


def skip_of(table: RoomTable, agent: RoomAgent, result: ChatResult) -> str | None:
    """Why this answer is a skip, None if it is an answer: a SKIP, or nothing left of it to show. An answer that
    was all another participant's lines is no message of the agent's (an empty card kept in the conversation
    would be): the turn is skipped, its system line says why, and the next participant goes on."""
    if (reason := q.skip_reason(result.text)) is not None:
        return reason
    kept = guarded(table, agent, result)
    if kept.text.strip():
        return None
    if kept.cut_at:
        return f"their answer was only other participants' lines (it began with {kept.cut_at}'s), so nothing was kept"
    return "their answer was empty"


def reply_fields(table: RoomTable, agent: RoomAgent, result: ChatResult) -> dict[str, Any]:
    kept = guarded(table, agent, result)
    # Who wrote it and whether its token limit cut it, as a debate's events keep them: its card and exports say so.
    data: dict[str, Any] = {
        "model": result.model,
        **marks.made_by(table.endpoints[agent.pk]),
        **marks.cut_mark(result),
    }
    if kept.cut_at:
        data["speaker_guard"] = f"Cut where it began writing {kept.cut_at}'s lines."
    return {
        "content": kept.text,
        "data": data,
        "tokens_in": result.prompt_tokens,
        "tokens_out": result.completion_tokens,
        "tokens_cached": result.cached_tokens,
        "cost": result.cost,
    }


def failure(table: RoomTable, agent: RoomAgent, error: LLMError) -> RoomMessage:
    data: dict[str, Any] = {"retry_agent": agent.pk}
    if isinstance(error, LLMRateLimited):
        data["retry_after"] = error.retry_after
    return save(
        table.room, RoomMessage.Kind.ERROR, f"⚠️ {agent.name} Failed to respond: {error}", agent, data=data, active=False
    )


def failure_if_present(table: RoomTable, agent: RoomAgent, error: LLMError) -> RoomMessage | None:
    """The agent's failure line; None if it has left the room (there is no one to retry)."""
    with transaction.atomic():
        return failure(table, agent, error) if lock_present([agent]) else None


def stop_auto(room: Room, reason: str, *, retry_after: float | None = None) -> RoomMessage:
    room.mode = Room.Mode.MANUAL
    room.pause_reason = reason
    room.retry_at = timezone.now() + timedelta(seconds=retry_after) if retry_after else None
    room.save(update_fields=["mode", "pause_reason", "retry_at", "updated_at"])
    return save(room, RoomMessage.Kind.SYSTEM, f"Conversation paused: {reason}", active=False)


def save_round(table: RoomTable, outcomes: Sequence[tuple[RoomAgent, ChatResult | BaseException]]) -> list[RoomMessage]:
    """A round's answers as pending cards (skips and failures as their lines), all in one transaction."""
    saved: list[RoomMessage] = []
    with transaction.atomic():
        present = lock_present(agent for agent, _ in outcomes)
        for agent, result in outcomes:
            if agent.pk not in present:
                continue
            if isinstance(result, LLMError):
                saved.append(failure(table, agent, result))
            elif isinstance(result, ChatResult) and (reason := skip_of(table, agent, result)) is not None:
                saved.append(save_skip(table.room, agent, reason))
            elif isinstance(result, ChatResult):
                fields = reply_fields(table, agent, result)
                saved.append(save(table.room, RoomMessage.Kind.PENDING, agent=agent, **fields))
    return saved


def finish_turn(
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
            if (reason := skip_of(table, agent, result)) is not None:
                skipped.append(agent.pk)
                saved.append(save_skip(room, agent, reason))
            else:
                message = save(room, RoomMessage.Kind.AGENT, agent=agent, **reply_fields(table, agent, result))
                mentioned += q.find_mentions(message.content, agents, author_id=agent.pk)
                room.messages_since_auto += 1
                saved.append(message)
        group = [agent.pk for agent, _ in answers]
        queue = advance_queue(room, group, skipped, mentioned, picked, passed)
    return saved, queue


def advance_queue(
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


async def pause(table: RoomTable, observer: RoomObserver, reason: str, retry_after: float | None = None) -> None:
    message = await sync_to_async(stop_auto)(table.room, reason, retry_after=retry_after)
    await observer.message_saved(table.room, message)
    await observer.room_changed(table.room)
