"""A room page's websocket: a room its viewer may see, and the catch-up since the page's newest message."""

from __future__ import annotations

from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from chaoslm import live, sharing
from chaoslm.consumers import SharedConsumer
from chaoslm.http import parse_id
from rooms.broadcast import catch_up_html
from rooms.models import Room


class RoomConsumer(SharedConsumer):
    model = Room

    def group_of(self, thing: Room) -> str:
        return live.room_group(thing.pk)

    async def first_message(self) -> str:
        # Whispers as on the page: its owner's only.
        owner = sharing.is_owner(self.scope["user"], self.thing)
        return await database_sync_to_async(catch_up_html)(self.thing.pk, self._since(), with_whispers=owner)

    def _since(self) -> int:
        """The newest message id the page shows; missing, malformed or out of range means from the start."""
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        return parse_id(query.get("since", [""])[0]) or 0
