"""A room page's websocket: a room its viewer may see."""

from __future__ import annotations

from channels.db import database_sync_to_async

from chaoslm import live, sharing
from chaoslm.consumers import LiveConsumer
from rooms.models import Room


class RoomConsumer(LiveConsumer):
    async def allowed_group(self) -> str | None:
        kwargs = self.scope["url_route"]["kwargs"]
        room = await database_sync_to_async(sharing.find_visible)(
            Room, self.scope["user"], kwargs.get("pk"), kwargs.get("token")
        )
        return live.room_group(room.pk) if room is not None else None
