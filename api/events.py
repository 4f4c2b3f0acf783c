"""Live events for scripts: a debate as Server-Sent Events.

One SSE event (`event: event`) per saved event the caller may read, its ordinal as the SSE id, in the order
they were saved; `Last-Event-ID` (or `?after=`) resumes after that event, so a client that reconnects gets
everything it missed and nothing twice. The status (`event: status`) whenever it changes, and `event: end` once
the debate rests (completed, failed, interrupted, waiting for its human seat: a later run reopens it).
With `?tokens=1`, the replies' tokens as they are written (`event: token`, no id: not replayed on resume),
from the same pushes its page gets (chaoslm/live.py), so private thinking streams only to whom the page
streams it (debates/privacy.py). Each tick re-reads the debate and the token: a token revoked, or a debate the
caller may no longer see, ends the stream at once.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from html import unescape
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Router

from api.access import readable
from api.problems import refusals
from api.tokens import still_active
from chaoslm import live, sharing
from debates import privacy, transcripts
from debates.broadcast import group_of
from debates.models import Debate, Event

router = Router()

RESTING = {Debate.Status.COMPLETED, Debate.Status.ERROR, Debate.Status.INTERRUPTED, Debate.Status.WAITING}
# A token push as the page's `tokens` swap gets it: the text for one card being written, or its reset.
# A piece may carry its generation and offset (chaoslm/live.py), which a stream in order does not need.
TOKENS = re.compile(
    r'<span data-into="ev-(\d+)-text"(?: data-gen="\d+" data-at="\d+")?( data-reset)?>(.*?)</span>', re.S
)


def sse(kind: str, data: dict[str, Any], event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _cursor(debate_id: int, after: int | None) -> int:
    """The saved order to resume after: the event at ordinal `after` (0: from the start)."""
    if not after:
        return 0
    found = Event.objects.filter(debate_id=debate_id, ordinal=after).values_list("pk", flat=True).first()
    if found is not None:
        return found
    # The event at that ordinal was a failed step's, since replaced: resume after what was saved before it.
    earlier = Event.objects.filter(debate_id=debate_id, ordinal__lt=after).order_by("-pk").values_list("pk", flat=True)
    return earlier.first() or 0


def _tick(debate_id: int, user: Any, token_id: int, cursor: int) -> tuple[str, Debate | None, list[tuple[int, str]]]:
    """What a stream sends next: ("revoked" | "gone" | "ok", the debate, [(event pk, SSE text)] after `cursor`)."""
    if not still_active(token_id):
        return "revoked", None, []
    debate = Debate.objects.filter(pk=debate_id).first()
    if debate is None or not sharing.can_view(user, debate):
        return "gone", None, []
    access = privacy.access(user, debate)
    events = debate.events.filter(pk__gt=cursor).order_by("pk")
    rows = transcripts.event_rows(debate, events, access=access)
    # The cursor passes events the caller may not read too, so they are not looked at again.
    last = max((e.pk for e in events), default=cursor) if not rows else None
    sent = [(event.pk, sse("event", row, event.ordinal)) for event, row in rows]
    if last is not None and last != cursor:
        sent.append((last, ""))
    return "ok", debate, sent


async def stream(debate: Debate, user: Any, token_id: int, after: int | None, tokens: bool) -> AsyncIterator[str]:
    tick = settings.CHAOSLM_API_STREAM_TICK
    cursor = await sync_to_async(_cursor)(debate.pk, after)
    status = None
    insider = privacy.is_insider(user, debate)
    listener = live.Listener(group_of(debate, insider=insider)) if tokens else None
    if listener is not None:
        await listener.__aenter__()
    try:
        yield ": ChaosLM debate events\n\n"
        while True:
            state, current, rows = await sync_to_async(_tick)(debate.pk, user, token_id, cursor)
            if current is None:
                reason = "The token was revoked." if state == "revoked" else "You may no longer see this debate."
                yield sse("closed", {"reason": reason})
                return
            for pk, text in rows:
                cursor = pk
                if text:
                    yield text
            if current.status != status:
                status = current.status
                yield sse("status", {"status": status, "is_ending": current.is_ending, "error": current.error_text})
            if status in RESTING:
                yield sse("end", {"status": status})
                return
            if listener is None:
                await asyncio.sleep(tick)
                continue
            # Wait for pushes until the tick is up, passing on their tokens as they come.
            deadline = asyncio.get_running_loop().time() + tick
            while (left := deadline - asyncio.get_running_loop().time()) > 0:
                html = await listener.next(left)
                if html is None or html == live.Listener.CLOSED:
                    break
                for ordinal, reset, text in TOKENS.findall(html):
                    if reset:
                        yield sse("reset", {"ordinal": int(ordinal)})
                    if text:
                        yield sse("token", {"ordinal": int(ordinal), "text": unescape(text)})
    finally:
        if listener is not None:
            await listener.__aexit__(None, None, None)


@router.get(
    "/debates/{id:debate_id}/events",
    response={200: str, **refusals(404, 422)},
    summary="Follow a debate's events (Server-Sent Events)",
    tags=["debates"],
    openapi_extra={
        "responses": {
            200: {
                "description": "Events: `event` (id: its ordinal), `status`, `token`, `reset`, `end`, `closed`",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        },
        "parameters": [
            {
                "in": "header",
                "name": "Last-Event-ID",
                "required": False,
                "schema": {"type": "integer"},
                "description": "Resume after this event's ordinal (what the stream last sent as `id`).",
            }
        ],
    },
)
async def debate_events(request: HttpRequest, debate_id: int, after: int | None = None, tokens: bool = False) -> Any:
    """Every saved event you may read, then each new one as it is saved; resumes exactly with `Last-Event-ID`
    or `after`. `tokens=1` adds the replies' tokens as they are written."""
    debate = await sync_to_async(readable)(Debate, request, debate_id)
    last = request.headers.get("Last-Event-ID", "")
    resume = int(last) if last.isascii() and last.isdigit() and len(last) < 10 else after
    response = StreamingHttpResponse(
        stream(debate, request.user, request.auth.pk, resume, tokens),  # type: ignore[attr-defined]
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
