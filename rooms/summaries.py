"""Summaries: when the context fills up, the oldest half of what agents see folds into one summary by the room's
summarizer; agents then see the summary where the oldest message it folds was."""

from __future__ import annotations

from collections.abc import Sequence

from asgiref.sync import sync_to_async
from django.db import transaction

from chaoslm.llm import ChatResult, LLMError, Policy, chat, marks
from rooms import queue as q
from rooms.context import in_history, in_order
from rooms.models import Room, RoomMessage
from rooms.saving import pause, save
from rooms.table import RoomObserver, RoomTable


def _save_summary(
    room: Room, fold: Sequence[RoomMessage], text: str, result: ChatResult, made_by: dict[str, str]
) -> RoomMessage:
    # A summary reads where the oldest message under it was (`in_order`), even when it folds an earlier summary.
    first = min(m.data.get("first", m.pk) if m.kind == RoomMessage.Kind.SUMMARY else m.pk for m in fold)
    with transaction.atomic():
        summary = save(
            room,
            RoomMessage.Kind.SUMMARY,
            text,
            author="Summary",
            data={"first": first, "folded": len(fold), "model": result.model, **made_by, **marks.cut_mark(result)},
            tokens_in=result.prompt_tokens,
            tokens_out=result.completion_tokens,
            tokens_cached=result.cached_tokens,
            cost=result.cost,
        )
        RoomMessage.objects.filter(pk__in=[m.pk for m in fold]).update(folded_into=summary)
    return summary


async def fold_oldest(table: RoomTable, observer: RoomObserver) -> bool | None:
    """Fold the oldest half of what agents see into one summary by the room's summarizer. True if it did;
    False if there is too little to fold; None if the summarizer failed (auto mode is then paused)."""
    room = table.room
    foldable = [
        m
        for m in in_order(table.messages)
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
        await pause(table, observer, f"the summarizer failed: {error}")
        return None
    summary = await sync_to_async(_save_summary)(room, fold, result.text.strip(), result, marks.made_by(endpoint))
    await observer.message_saved(room, summary)
    agents = {a.pk: a for a in table.agents}
    for message in fold:
        message.folded_into_id = summary.pk
        if message.agent_id is not None:
            message.agent = agents[message.agent_id]  # the card draws it with no query
        await observer.message_saved(room, message)  # its card now says it was summarised
    return True
