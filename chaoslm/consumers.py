"""The base of every live page's websocket: authenticate, join one group, forward pushes. Nothing else."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer

from chaoslm import live


class LiveConsumer(AsyncWebsocketConsumer):
    group: str | None = None
    share: str | None = None  # the share link's group, for a socket opened through one

    async def allowed_group(self) -> str | None:
        """The group this socket may join (after checking who is asking), or None to refuse it."""
        raise NotImplementedError

    async def first_message(self) -> str:
        """What to send once joined: a catch-up, say."""
        return ""

    async def connect(self) -> None:
        group = await self.allowed_group()
        if group is None:
            await self.close(code=4403)
            return
        self.group = group
        # Join first, then catch up: a push landing in between may arrive twice, and pushes are idempotent.
        await live.join(group, self.channel_name)
        token = self.scope["url_route"]["kwargs"].get("token")
        if token:
            self.share = live.share_group(token)
            await live.join(self.share, self.channel_name)
        await self.accept()
        first = await self.first_message()
        if first:
            await self.send(text_data=first)

    async def disconnect(self, code: int) -> None:
        for group in (self.group, self.share):
            if group:
                await live.leave(group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Pages only listen; anything they send is ignored."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message["type"] == live.PUSH_TYPE:
            # Pushes only forward HTML. Channels' dispatch would first close stale database connections
            # in a worker thread: a thread hop per message per spectator, the biggest cost of a push.
            await self.send(text_data=message["html"])
            return
        if message["type"] == live.CLOSE_TYPE:
            await self.close(code=4403)  # the link it came through stopped working
            return
        await super().dispatch(message)
