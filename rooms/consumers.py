"""A room page's websocket: check access, join the room's group, forward pushes."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from chaoslm import live
from debates import access
from rooms.models import Room


def _allowed_room(user: Any, pk: int | None, token: str | None) -> Room | None:
    room = Room.objects.filter(pk=pk).first() if pk is not None else Room.objects.filter(share_token=token).first()
    if room is None:
        return None
    allowed = access.can_view(user, room) if token is None else access.can_view_shared(room, token)
    return room if allowed else None


class RoomConsumer(AsyncWebsocketConsumer):
    group: str | None = None

    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        room = await database_sync_to_async(_allowed_room)(self.scope["user"], kwargs.get("pk"), kwargs.get("token"))
        if room is None:
            await self.close(code=4403)
            return
        self.group = live.room_group(room.pk)
        await live.join(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group:
            await live.leave(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Pages only listen."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message["type"] == live.PUSH_TYPE:
            await self.send(text_data=message["html"])  # no database: skip channels' per-message cleanup
            return
        await super().dispatch(message)
