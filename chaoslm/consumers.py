"""The base of every live page's websocket: authenticate, join one group, forward pushes. Nothing else.

`SharedConsumer` is the socket of a page showing one shared thing (a debate, a room, a tournament), by id
or share link. Who may open it is chaoslm/sharing.py's rule, as for the page. A socket also joins the
group that closes it when the owner takes that right away: the share link's, or, for a viewer at the
thing's own address who sees it only because it is public, `sharing.public_group`
(`sharing.set_visibility`).
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from chaoslm import live, sharing


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


class SharedConsumer(LiveConsumer):
    model: Any  # the shared model class
    thing: Any = None
    public_only: str | None = None

    def group_of(self, thing: Any) -> str:
        """The live group of the page showing `thing`."""
        raise NotImplementedError

    async def allowed_group(self) -> str | None:
        kwargs = self.scope["url_route"]["kwargs"]
        user, token = self.scope["user"], kwargs.get("token")
        thing = await database_sync_to_async(sharing.find_visible)(self.model, user, kwargs.get("pk"), token)
        if thing is None:
            return None
        self.thing = thing
        if sharing.sees_only_while_public(user, thing, token):
            self.public_only = sharing.public_group(thing)
            await live.join(self.public_only, self.channel_name)
        return self.group_of(thing)

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        if self.public_only:
            await live.leave(self.public_only, self.channel_name)
