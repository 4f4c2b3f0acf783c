"""The debate page's websocket: authenticate, join the debate's group, send the catch-up, forward pushes."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from chaoslm import live
from debates import access
from debates.broadcast import catch_up_html
from debates.models import Debate


def _allowed_debate(user: Any, pk: int | None, token: str | None) -> Debate | None:
    debate = (
        Debate.objects.filter(pk=pk).first() if pk is not None else Debate.objects.filter(share_token=token).first()
    )
    if debate is None:
        return None
    allowed = access.can_view(user, debate) if token is None else access.can_view_shared(debate, token)
    return debate if allowed else None


class DebateConsumer(AsyncWebsocketConsumer):
    group: str | None = None

    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        debate = await database_sync_to_async(_allowed_debate)(
            self.scope["user"], kwargs.get("pk"), kwargs.get("token")
        )
        if debate is None:
            await self.close(code=4403)
            return
        self.group = live.debate_group(debate.pk)
        # Join first, then catch up: an event landing in between may arrive twice, and cards are idempotent.
        await live.join(self.group, self.channel_name)
        await self.accept()
        await self.send(text_data=await database_sync_to_async(catch_up_html)(debate.pk, self._since()))

    def _since(self) -> int:
        query = self.scope.get("query_string", b"").decode()
        for part in query.split("&"):
            key, _, value = part.partition("=")
            if key == "since" and value.isdigit():
                return int(value)
        return 0

    async def disconnect(self, code: int) -> None:
        if self.group:
            await live.leave(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Pages only listen; anything they send is ignored."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message["type"] == live.PUSH_TYPE:
            # Pushes only forward HTML. Channels' dispatch would first close stale database connections
            # in a worker thread: a thread hop per message per spectator, the biggest cost of a push.
            await self.push_html(message)
            return
        await super().dispatch(message)

    async def push_html(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["html"])
