"""Live events of a batch (a tournament, an experiment) for scripts, as Server-Sent Events.

Each debate of the batch that reaches an end (completed, failed, interrupted) is stored once as a `BatchEvent`,
numbered 1, 2, 3 ... per batch in the order the numbers were committed (a per-batch counter row is locked while
one is added), so the numbers never skip one a client could miss. The stream sends each as `event: debate` with
its number as the SSE id; `Last-Event-ID` (or `?after=`) resumes after that number: nothing missed, nothing
twice. After them comes `event: progress` (done, running, failed, the ETA), and `event: status` whenever the
batch's status changes; these describe the batch as it stands, carry no id, and are sent again on a reconnect.
`event: end` once the batch settles (completed; paused or cancelled with nothing left running) and every end
of its debates has been sent. Each tick re-reads the token and the batch: a token revoked, or a batch the
caller may no longer see, ends the stream at once (`event: closed`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.signals import post_delete, post_save

from api.models import BatchEvent, BatchEventCounter
from api.sse import sse
from api.tokens import still_active
from batches import kinds
from batches.kinds import COMPLETED, RUNNING, BatchKind
from chaoslm import sharing
from debates.models import Debate

ENDS = (Debate.Status.COMPLETED, Debate.Status.ERROR, Debate.Status.INTERRUPTED)


def _key(debate: Debate) -> str:
    # A completed debate is told once; a failed one each time it fails (a retried job may fail again).
    if debate.status == Debate.Status.COMPLETED:
        return f"{debate.pk}:completed"
    return f"{debate.pk}:{debate.status}:{debate.updated_at.timestamp()}"


def record(kind: str, batch_id: int, debate: Debate) -> None:
    """Store the end of one of the batch's debates as its next event (once, however often the row is saved)."""
    key = _key(debate)
    data = {
        "debate": debate.pk,
        "status": debate.status,
        "topic": debate.topic,
        "format": debate.format,
        "winner": debate.winner,
        "error": debate.error_text,
    }
    try:
        with transaction.atomic():
            counter, _ = BatchEventCounter.objects.select_for_update().get_or_create(kind=kind, batch_id=batch_id)
            counter.last += 1
            counter.save(update_fields=["last"])
            BatchEvent.objects.create(
                kind=kind, batch_id=batch_id, seq=counter.last, debate_id=debate.pk, key=key, data=data
            )
    except IntegrityError:
        # Stored already (its key is unique to the batch): by an earlier save of the same end, or another save at
        # the same moment; the count went back with the rest, so no number is skipped.
        return


def on_debate_saved(sender: Any, instance: Debate, update_fields: Any = None, **kwargs: Any) -> None:
    if update_fields is not None and "status" not in update_fields:
        return
    if not instance.in_batch or instance.status not in ENDS:
        return
    found = kinds.batch_of(instance)
    if found is not None:
        record(found[0].kind, found[1], instance)


def forget(kind: str, batch_id: int) -> None:
    """A deleted batch's events go with it."""
    BatchEvent.objects.filter(kind=kind, batch_id=batch_id).delete()
    BatchEventCounter.objects.filter(kind=kind, batch_id=batch_id).delete()


def progress_of(kind: BatchKind, batch: Any) -> dict[str, Any]:
    figures = kind.progress(batch)
    return {
        "total": figures.total,
        "done": figures.done,
        "running": figures.running,
        "failed": figures.failed,
        "done_percent": figures.done_percent,
        "eta_seconds": figures.eta_seconds,
        "overdue": figures.overdue,
        "eta_text": figures.eta_text,
    }


def _all_told(kind: BatchKind, batch: Any) -> bool:
    """Whether every end of the batch's debates has its event (a debate's end and the batch's completion are
    stored in separate transactions, so the stream does not end between the two)."""
    ended = kind.debates(batch).filter(status__in=ENDS)
    told = BatchEvent.objects.filter(kind=kind.kind, batch_id=batch.pk).values_list("debate_id", flat=True)
    completed_told = BatchEvent.objects.filter(
        kind=kind.kind, batch_id=batch.pk, data__status=Debate.Status.COMPLETED
    ).values_list("debate_id", flat=True)
    return (
        not ended.exclude(pk__in=told).exists()
        and not ended.filter(status=Debate.Status.COMPLETED).exclude(pk__in=completed_told).exists()
    )


def _tick(kind: BatchKind, batch_id: int, user: Any, token_id: int, cursor: int) -> dict[str, Any]:
    """What the stream sends next after event `cursor`; `closed` (the reason) when it must close."""
    if not still_active(token_id):
        return {"closed": "The token was revoked."}
    batch = kind.model.objects.filter(pk=batch_id).first()
    if batch is None or not sharing.can_view(user, batch):
        return {"closed": f"You may no longer see this {kind.model._meta.verbose_name}."}
    progress = progress_of(kind, batch)
    settled = batch.status == COMPLETED or (batch.status != RUNNING and progress["running"] == 0)
    # Whether it has ended is settled before its events are read: an end told between the two reads is then
    # among them, never left behind the `end`.
    ended = settled and _all_told(kind, batch)
    events = list(
        BatchEvent.objects.filter(kind=kind.kind, batch_id=batch_id, seq__gt=cursor)
        .order_by("seq")
        .values_list("seq", "data")
    )
    return {"events": events, "status": batch.status, "progress": progress, "ended": ended}


async def stream(kind: BatchKind, batch_id: int, user: Any, token_id: int, after: int | None) -> AsyncIterator[str]:
    tick = settings.CHAOSLM_API_STREAM_TICK
    cursor = after or 0
    status = None
    shown: dict[str, Any] | None = None
    yield f": ChaosLM {kind.kind} events\n\n"
    while True:
        now = await sync_to_async(_tick)(kind, batch_id, user, token_id, cursor)
        if "closed" in now:
            yield sse("closed", {"reason": now["closed"]})
            return
        for seq, data in now["events"]:
            cursor = seq
            yield sse("debate", data, seq)
        if now["progress"] != shown:
            shown = now["progress"]
            yield sse("progress", shown)
        if now["status"] != status:
            status = now["status"]
            yield sse("status", {"status": status})
        if now["ended"]:
            yield sse("end", {"status": status})
            return
        await asyncio.sleep(tick)


def resume_point(last_event_id: str, after: int | None) -> int | None:
    """Where a client resumes: its `Last-Event-ID` header, else `?after=`."""
    if last_event_id.isascii() and last_event_id.isdigit() and len(last_event_id) < 10:
        return int(last_event_id)
    return after


def connect_signals() -> None:
    """Store the ends of batches' debates (api/apps.py, once a process)."""
    post_save.connect(on_debate_saved, sender=Debate, dispatch_uid="api-batch-events-debate")

    def forget_when_deleted(kind: BatchKind) -> None:
        post_delete.connect(
            lambda sender, instance, name=kind.kind, **_: forget(name, instance.pk),
            sender=kind.model,
            dispatch_uid=f"api-batch-events-forget-{kind.kind}",
            weak=False,
        )

    kinds.each_kind(forget_when_deleted)
