"""A room's live events for scripts, on the generic stream of api/events.py.

`event: message` per saved message (id: its number, the order the room's messages are kept in), as the room's
export gives it (rooms/exports.py), whispers to the owner only, as on the page. A pending answer (a manual
round's, waiting for the owner to keep or drop it) is sent as `event: pending` (no id) when it appears, and
as a `message` once it is kept or dropped; the stream's cursor stops before the first pending answer, so the
messages saved after it wait for that decision and come in order, and a resume never passes one. A message
changed after it was sent (made inactive, folded into a summary) is not sent again: `GET /rooms/{id}` has
every message as it is now. The room's mode (`event: status`) whenever it changes; a room never rests, so the
stream stays open until the client leaves, the token is revoked, or the room is gone or hidden from the caller.
With `?tokens=1`, the agents' answers as they are written (`event: token`, {agent, name, text}).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from ninja import Router

from api.access import readable
from api.events import Tick, openapi, response, resume_from, stream, token_pieces
from api.refusals import refusals
from api.sse import sse
from chaoslm import live, sharing
from rooms.exports import message_entry
from rooms.models import Room, RoomMessage

router = Router(tags=["rooms"])


class RoomSource:
    name = "room"

    def __init__(self, room: Room, user: Any) -> None:
        self.room_id = room.pk
        self.user = user
        self.group = live.room_group(room.pk)
        self.pending_sent: set[int] = set()
        self.names: dict[int, str] = {}

    def cursor(self, after: int | None) -> int:
        return after or 0

    def tick(self, cursor: int) -> Tick:
        room = Room.objects.filter(pk=self.room_id).first()
        if room is None or not sharing.can_view(self.user, room):
            return Tick(closed="You may no longer see this room.")
        owner = sharing.is_owner(self.user, room)
        sent = []
        waiting = False
        for message in room.messages.filter(pk__gt=cursor):
            private = bool(message.audience) and not owner
            if message.kind == RoomMessage.Kind.PENDING:
                waiting = True
                if not private and message.pk not in self.pending_sent:
                    self.pending_sent.add(message.pk)
                    sent.append(sse("pending", message_entry(message)))
            elif not waiting:
                # The cursor passes messages the caller may not read too, so they are not looked at again.
                cursor = message.pk
                if not private:
                    sent.append(sse("message", message_entry(message), message.pk))
        self.names = dict(room.agents.values_list("pk", "name"))
        return Tick(cursor=cursor, sent=sent, status={"mode": room.mode, "pause_reason": room.pause_reason})

    def tokens(self, html: str) -> list[str]:
        return [
            sse("token", {"agent": agent, "name": self.names.get(agent, ""), "text": text})
            for agent, _reset, text in token_pieces("think-{n}-text", html)
            if text
        ]


@router.get(
    "/rooms/{id:room_id}/events",
    response={200: str, **refusals(404, 422)},
    summary="Follow a room's messages (Server-Sent Events)",
    openapi_extra=openapi("message's id", "`message` (id: the message's), `pending`, `status`, `token`, `closed`"),
)
async def room_events(request: HttpRequest, room_id: int, after: int | None = None, tokens: bool = False) -> Any:
    """Every saved message you may read, then each new one as it is saved; resumes exactly with `Last-Event-ID`
    or `after`. `tokens=1` adds the agents' answers as they are written."""
    room = await sync_to_async(readable)(Room, request, room_id)
    source = RoomSource(room, request.user)
    return response(stream(source, request.auth.pk, resume_from(request, after), tokens))  # type: ignore[attr-defined]
