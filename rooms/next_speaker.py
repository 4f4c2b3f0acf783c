"""A selector room's next speaker: the selector model is asked whom of the candidates, and a system line says
who is next and why (its choice, or round robin when it names nobody who may speak)."""

from __future__ import annotations

import itertools

from asgiref.sync import sync_to_async

from chaoslm.llm import LLMError, Policy, chat
from rooms import queue as q
from rooms.context import in_history
from rooms.models import Room, RoomMessage
from rooms.saving import save
from rooms.table import RoomObserver, RoomTable


def _announced(room: Room) -> tuple[int, ...]:
    """Who the room's newest message, a selector's "Next:" line, named: its turn was never saved (the worker died
    and the task came again), so that turn is taken without asking or announcing it twice."""
    newest = room.messages.order_by("-pk").only("kind", "data").first()
    if newest is None or newest.kind != RoomMessage.Kind.SYSTEM:
        return ()
    return tuple(newest.data.get("next", ()))


async def select_next(
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
    message = await sync_to_async(save)(room, RoomMessage.Kind.SYSTEM, line, active=False, data=data)
    await observer.message_saved(room, message)
    return group
