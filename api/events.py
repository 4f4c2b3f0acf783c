"""Live events for scripts as Server-Sent Events: one generic stream (`stream`) over a source, a debate's here
(`DebateSource`), a room's in api/room_events.py.

One SSE event per saved item the caller may read, its number as the SSE id, in the order they were saved;
`Last-Event-ID` (or `?after=`) resumes after that item, so a client that reconnects gets everything it missed
and nothing twice. The thing's status (`event: status`) whenever it changes, and `event: end` once it rests.
With `?tokens=1`, the replies' tokens as they are written (no id: not replayed on resume), from the same pushes
its page gets (chaoslm/live.py), so they stream only to whom the page streams them. Each tick re-reads the
token and the thing: a token revoked, or a thing the caller may no longer see, ends the stream at once.

A debate: `event: event` per saved event (id: its ordinal), under the page's privacy rule (debates/privacy.py);
it rests once completed, failed, interrupted or waiting for its human seat (a later run reopens it); its tokens
are `event: token` ({ordinal, text}) and `event: reset` ({ordinal}: the text so far is dropped, a retry).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from html import unescape
from typing import Any, Protocol

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Router

from api.access import readable
from api.refusals import refusals
from api.sse import sse
from api.tokens import still_active
from chaoslm import live, sharing
from debates import privacy, transcripts
from debates.broadcast import group_of
from debates.models import Debate, Event

router = Router()

RESTING = {Debate.Status.COMPLETED, Debate.Status.ERROR, Debate.Status.INTERRUPTED, Debate.Status.WAITING}
# Each target id pattern's token pieces, compiled once (token_pieces).
TOKENS: dict[str, re.Pattern[str]] = {}


@dataclass
class Tick:
    """What a stream sends next: its saved items after the cursor (as SSE text), the cursor past them, the thing's
    status (sent when it changes), and whether it rests (`end`). `closed`: why the stream stops instead."""

    cursor: int = 0
    sent: list[str] = field(default_factory=list)
    status: dict[str, Any] | None = None
    resting: bool = False
    closed: str = ""


class Source(Protocol):
    """One thing's stream: a debate's events, a room's messages. Its methods run in a thread (they query)."""

    name: str  # "debate", "room": the comment that opens the stream
    group: str  # the live group whose pushes carry its tokens

    def cursor(self, after: int | None) -> int:
        """Where to resume after the item whose SSE id is `after` (None or 0: from the start)."""
        ...

    def tick(self, cursor: int) -> Tick: ...

    def tokens(self, html: str) -> list[str]:
        """The SSE text for the token pieces in one push."""
        ...


def _tick(source: Source, token_id: int, cursor: int) -> Tick:
    if not still_active(token_id):
        return Tick(closed="The token was revoked.")
    return source.tick(cursor)


async def stream(source: Source, token_id: int, after: int | None, tokens: bool) -> AsyncIterator[str]:
    """The generic stream: each tick, what `source` saved since the cursor and its status; between ticks, with
    `tokens`, the token pieces of its live pushes as they come."""
    tick = settings.CHAOSLM_API_STREAM_TICK
    cursor = await sync_to_async(source.cursor)(after)
    status = None
    listener = live.Listener(source.group) if tokens else None
    if listener is not None:
        await listener.__aenter__()
    try:
        yield f": ChaosLM {source.name} events\n\n"
        while True:
            now = await sync_to_async(_tick)(source, token_id, cursor)
            if now.closed:
                yield sse("closed", {"reason": now.closed})
                return
            cursor = now.cursor
            for text in now.sent:
                yield text
            if now.status is not None and now.status != status:
                status = now.status
                yield sse("status", status)
            if now.resting:
                yield sse("end", {"status": (status or {}).get("status")})
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
                for text in source.tokens(html):
                    yield text
    finally:
        if listener is not None:
            await listener.__aexit__(None, None, None)


def token_pieces(target: str, html: str) -> list[tuple[int, bool, str]]:
    """(the number in the target id, reset, text) for each token piece of a push whose target id is `target`
    with `{n}` for the number, as the page's `tokens` swap gets it; a piece may carry its generation and offset
    (chaoslm/live.py), which a stream in order does not need."""
    pattern = TOKENS.get(target)
    if pattern is None:
        number = re.escape(target).replace(re.escape("{n}"), r"(\d+)")
        pattern = TOKENS[target] = re.compile(
            rf'<span data-into="{number}"(?: data-gen="\d+" data-at="\d+")?( data-reset)?>(.*?)</span>', re.S
        )
    return [(int(n), bool(reset), unescape(text)) for n, reset, text in pattern.findall(html)]


def response(events: AsyncIterator[str]) -> StreamingHttpResponse:
    reply = StreamingHttpResponse(events, content_type="text/event-stream")
    reply["Cache-Control"] = "no-cache"
    reply["X-Accel-Buffering"] = "no"
    return reply


def resume_from(request: HttpRequest, after: int | None) -> int | None:
    """`Last-Event-ID` when the client sent one it could have had from us, else `?after=`."""
    last = request.headers.get("Last-Event-ID", "")
    return int(last) if last.isascii() and last.isdigit() and len(last) < 10 else after


def openapi(what: str, kinds: str) -> dict[str, Any]:
    """An event stream's OpenAPI: its `text/event-stream` body and its `Last-Event-ID` header."""
    return {
        "responses": {
            200: {
                "description": f"Events: {kinds}",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        },
        "parameters": [
            {
                "in": "header",
                "name": "Last-Event-ID",
                "required": False,
                "schema": {"type": "integer"},
                "description": f"Resume after this {what} (what the stream last sent as `id`).",
            }
        ],
    }


class DebateSource:
    """A debate's saved events (ids: their ordinals) under the page's privacy rule, its status, and its end."""

    name = "debate"

    def __init__(self, debate: Debate, user: Any) -> None:
        self.debate_id = debate.pk
        self.user = user
        self.group = group_of(debate, insider=privacy.is_insider(user, debate))

    def cursor(self, after: int | None) -> int:
        """The saved order to resume after: the event at ordinal `after` (0: from the start)."""
        if not after:
            return 0
        events = Event.objects.filter(debate_id=self.debate_id)
        found = events.filter(ordinal=after).values_list("pk", flat=True).first()
        if found is not None:
            return found
        # The event at that ordinal was a failed step's, since replaced: resume after what was saved before it.
        return events.filter(ordinal__lt=after).order_by("-pk").values_list("pk", flat=True).first() or 0

    def tick(self, cursor: int) -> Tick:
        debate = Debate.objects.filter(pk=self.debate_id).first()
        if debate is None or not sharing.can_view(self.user, debate):
            return Tick(closed="You may no longer see this debate.")
        access = privacy.access(self.user, debate)
        events = debate.events.filter(pk__gt=cursor).order_by("pk")
        rows = transcripts.event_rows(debate, events, access=access)
        # The cursor passes events the caller may not read too, so they are not looked at again.
        last = max((e.pk for e in events), default=cursor)
        status = {"status": debate.status, "is_ending": debate.is_ending, "error": debate.error_text}
        return Tick(
            cursor=last,
            sent=[sse("event", row, event.ordinal) for event, row in rows],
            status=status,
            resting=debate.status in RESTING,
        )

    def tokens(self, html: str) -> list[str]:
        sent = []
        for ordinal, reset, text in token_pieces("ev-{n}-text", html):
            if reset:
                sent.append(sse("reset", {"ordinal": ordinal}))
            if text:
                sent.append(sse("token", {"ordinal": ordinal, "text": text}))
        return sent


@router.get(
    "/debates/{id:debate_id}/events",
    response={200: str, **refusals(404, 422)},
    summary="Follow a debate's events (Server-Sent Events)",
    tags=["debates"],
    openapi_extra=openapi("event's ordinal", "`event` (id: its ordinal), `status`, `token`, `reset`, `end`, `closed`"),
)
async def debate_events(request: HttpRequest, debate_id: int, after: int | None = None, tokens: bool = False) -> Any:
    """Every saved event you may read, then each new one as it is saved; resumes exactly with `Last-Event-ID`
    or `after`. `tokens=1` adds the replies' tokens as they are written."""
    debate = await sync_to_async(readable)(Debate, request, debate_id)
    source = DebateSource(debate, request.user)
    return response(stream(source, request.auth.pk, resume_from(request, after), tokens))  # type: ignore[attr-defined]
