"""The base of every live page's websocket: authenticate, join one group, forward pushes. Nothing else.

`SharedConsumer` is the socket of a page showing one shared thing (a debate, a room, a tournament), by id
or share link. Who may open it is chaoslm/sharing.py's rule, as for the page. A socket also joins the
group that closes it when the owner takes that right away: the share link's, or, for a viewer at the
thing's own address who sees it only because it is public, `sharing.public_group`
(`sharing.set_visibility`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from chaoslm import live, metrics, sharing

# Close code for "your page fell behind, reconnect and catch up": 1013 (try again later) is one the htmx ws
# extension reconnects on by itself. Under daphne the connection is dropped instead (`drop_connection`): autobahn
# refuses to send 1013 (only 1000 and 3000-4999), and the page reconnects after a dropped connection (1006) too.
RESYNC_CODE = 1013


def unsent_bytes(send: Any) -> Callable[[], int] | None:
    """How many bytes daphne holds for a socket that its reader has not taken yet, or None if the server is
    not daphne. The ASGI `send` daphne gives an application is `partial(server.handle_reply, protocol)`: the
    protocol's transport is a Twisted socket, which buffers without bound whatever its reader does not take."""
    if not isinstance(send, partial) or not send.args:
        return None
    protocol = send.args[0]

    def unsent() -> int:
        transport = getattr(protocol, "transport", None)
        buffered = getattr(transport, "dataBuffer", None)
        if buffered is None:
            return 0
        return len(buffered) - transport.offset + transport._tempDataLen

    return unsent


def drop_connection(send: Any) -> Callable[[], None] | None:
    """A function that drops the socket's connection at once (its buffer freed, the page told 1006), or None if
    the server is not daphne (see `unsent_bytes`)."""
    if not isinstance(send, partial) or not send.args:
        return None
    protocol = send.args[0]
    drop = getattr(protocol, "dropConnection", None)
    return None if drop is None else partial(drop, abort=True)


class NoteUnsentBytes:
    """ASGI middleware, outermost: gives a websocket's scope `unsent_bytes` and `drop_connection` of the server's
    own `send`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        unsent = unsent_bytes(send)
        if unsent is not None:
            scope = {**scope, "unsent_bytes": unsent, "drop_connection": drop_connection(send)}
        return await self.app(scope, receive, send)


class LiveConsumer(AsyncWebsocketConsumer):
    """A socket that reads slowly costs only itself: once the server holds more than
    `CHAOSLM_LIVE_BACKLOG_BYTES` its reader has not taken, or a push to it was lost on the way (a numbered
    push skipped: a channel layer drops messages for a channel over its capacity), nothing more is sent to it
    and it is closed with `RESYNC_CODE`; the page reconnects and catches up from what it shows."""

    group: str | None = None
    share: str | None = None  # the share link's group, for a socket opened through one
    resyncing = False
    backlog_limit = 0
    counted = False  # in /metrics' open sockets

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.last_seq: dict[str, int] = {}  # the last push number seen from each outbox (live.Outbox)

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
        self.counted = True
        metrics.spectators.inc()
        first = await self.first_message()
        if first:
            await self.send(text_data=first)
        # A long catch-up may still be on its way out: it does not count against the page.
        self.backlog_limit = settings.CHAOSLM_LIVE_BACKLOG_BYTES + len(first.encode())

    async def disconnect(self, code: int) -> None:
        if self.counted:
            self.counted = False
            metrics.spectators.dec()
        for group in (self.group, self.share):
            if group:
                await live.leave(group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Pages only listen; anything they send is ignored."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message["type"] != live.PUSH_TYPE:
            await self._dispatch_other(message)
            return
        # Pushes only forward HTML. Channels' dispatch would first close stale database connections
        # in a worker thread: a thread hop per message per spectator, the biggest cost of a push.
        # Those already here behind this one go out with it, as one message (live.arrived); others in order.
        pushes = [message]
        for later in live.arrived(self.channel_name):
            if later["type"] == live.PUSH_TYPE:
                pushes.append(later)
                continue
            await self._forward(pushes)
            pushes = []
            await self._dispatch_other(later)
        await self._forward(pushes)

    async def _forward(self, pushes: list[dict[str, Any]]) -> None:
        if self.resyncing or not pushes:
            return
        if any(self._skipped(push) for push in pushes) or self._unsent() > self.backlog_limit:
            self.resyncing = True
            drop = self.scope.get("drop_connection")
            if drop is not None:
                drop()
            else:
                await self.close(code=RESYNC_CODE)
            return
        for push in pushes:
            metrics.push_forwarded(push)
        await self.send(text_data=pushes[0]["html"] if len(pushes) == 1 else "".join(p["html"] for p in pushes))

    async def _dispatch_other(self, message: dict[str, Any]) -> None:
        if message["type"] == live.CLOSE_TYPE:
            await self.close(code=4403)  # the link it came through stopped working
            return
        await super().dispatch(message)

    def _skipped(self, message: dict[str, Any]) -> bool:
        source = message.get("source")
        if source is None:
            return False
        last = self.last_seq.get(source)
        self.last_seq[source] = message["seq"]
        return last is not None and message["seq"] != last + 1

    def _unsent(self) -> int:
        unsent = self.scope.get("unsent_bytes")
        return unsent() if unsent is not None else 0


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
