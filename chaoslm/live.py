"""The one place that talks to the channel layer: pushing rendered HTML fragments to a page's group.

Pages join one group each (a debate's, a room's); consumers forward what arrives here to the socket.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils.html import escape

from chaoslm.embedded_layer import EmbeddedChannelLayer

PUSH_TYPE = "push.html"
CLOSE_TYPE = "push.close"

# The ASGI server's event loop. The in-memory channel layer's queues belong to one loop, so in the
# embedded setup debates must run (and push) on the loop that serves the websockets.
_serving_loop: asyncio.AbstractEventLoop | None = None


def serving_loop() -> asyncio.AbstractEventLoop | None:
    return _serving_loop


class RecordServingLoop:
    """ASGI middleware that notes the server's event loop on the first connection, then calls `on_serving`."""

    def __init__(self, app: Any, on_serving: Callable[[], None] | None = None) -> None:
        self.app = app
        self.on_serving = on_serving

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        global _serving_loop
        if _serving_loop is None:
            _serving_loop = asyncio.get_running_loop()
            if self.on_serving is not None:
                self.on_serving()
        return await self.app(scope, receive, send)


def debate_group(debate_id: int) -> str:
    return f"debate-{debate_id}"


def debate_viewers_group(debate_id: int) -> str:
    """A debate's sockets whose viewers may not read everything its owner does (debates/privacy.py)."""
    return f"debate-{debate_id}-viewers"


def room_group(room_id: int) -> str:
    return f"room-{room_id}"


def tournament_group(tournament_id: int) -> str:
    return f"tournament-{tournament_id}"


# What `look_for_audience` last heard of a group on a layer shared between processes: (anyone there, until).
_heard: dict[str, tuple[bool, float]] = {}
# An answer older than this is not trusted: the group is taken to have an audience until asked again. Those
# who ask (a debate's broadcaster, at each event) ask far more often.
HEARD_SECONDS = 60.0


def has_audience(group: str) -> bool:
    """Whether a socket may be listening to `group`. A group nobody has joined needs no pushes, nor the
    drawing of them: a page that joins later gets a catch-up from the database. The embedded layer knows at
    once (its groups are in this process); for a layer shared between processes (Redis), this is what
    `look_for_audience` last heard, and a group not asked about lately may have an audience."""
    layer = get_channel_layer()
    if isinstance(layer, EmbeddedChannelLayer):
        return layer.has_members(group)
    heard = _heard.get(group)
    return heard is None or heard[0] or heard[1] < time.monotonic()


async def look_for_audience(group: str) -> None:
    """Ask a Redis channel layer whether any socket is in `group`, for `has_audience` (one round trip).

    The membership is the layer's own (channels_redis keeps each group as a sorted set of channel names
    by the time they joined, expiring after its group_expiry): the same set its `group_send` reads."""
    # Imported here: redis's client is a good part of a command's start, and only a server with an audience asks.
    from channels_redis.core import RedisChannelLayer

    layer = get_channel_layer()
    if not isinstance(layer, RedisChannelLayer):
        return
    connection = layer.connection(layer.consistent_hash(group))
    members = await connection.zcount(layer._group_key(group), time.time() - layer.group_expiry, "+inf")
    now = time.monotonic()
    if len(_heard) > 1000:  # forget the groups of debates long over
        for name, (_, until) in list(_heard.items()):  # a copy: other threads' loops ask too
            if until < now:
                _heard.pop(name, None)
    _heard[group] = (members > 0, now + HEARD_SECONDS)


async def push(group: str, html: str) -> None:
    """Send `html` (hx-swap-oob fragments) to every socket in `group`."""
    if html:
        await get_channel_layer().group_send(group, {"type": PUSH_TYPE, "html": html})


def push_sync(group: str, html: str) -> None:
    """`push` for synchronous code (views)."""
    if html:
        async_to_sync(get_channel_layer().group_send)(group, {"type": PUSH_TYPE, "html": html})


def share_group(token: str) -> str:
    """The sockets opened through one share link: closed together when the link stops working."""
    return f"share-{token}"


def close_sync(group: str) -> None:
    """Close every socket in `group` (views: a reset share link, a page made private)."""
    async_to_sync(get_channel_layer().group_send)(group, {"type": CLOSE_TYPE})


class Listener:
    """A group's pushes for code that is not a websocket consumer (the API's event streams): `async with
    Listener(group) as listener`, then `await listener.next(timeout)` gives each push's HTML, None when none came
    in time; CLOSED when the group was told to close."""

    CLOSED = "\0closed"

    def __init__(self, group: str) -> None:
        self.group = group
        self.channel = ""

    async def __aenter__(self) -> Listener:
        layer = get_channel_layer()
        self.channel = await layer.new_channel("listener.")
        await layer.group_add(self.group, self.channel)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await get_channel_layer().group_discard(self.group, self.channel)

    async def next(self, timeout: float) -> str | None:
        try:
            message = await asyncio.wait_for(get_channel_layer().receive(self.channel), timeout)
        except TimeoutError:
            return None
        return self.CLOSED if message.get("type") == CLOSE_TYPE else message.get("html", "")


async def join(group: str, channel_name: str) -> None:
    await get_channel_layer().group_add(group, channel_name)


async def leave(group: str, channel_name: str) -> None:
    await get_channel_layer().group_discard(group, channel_name)


def upsert(html: str, into: str) -> str:
    """A fragment for the page's `upsert` swap: replace the elements in `html` that have the same ids, else
    append them to `into`."""
    return f'<div hx-swap-oob="upsert:{into}">{html}</div>'


def remove(element_id: str, anchor: str) -> str:
    """A fragment that takes the element away if the page has it (`anchor`: any element every page has)."""
    return upsert(f'<template data-remove="{element_id}"></template>', anchor)


# At most one push per window: what arrives while one is in its window goes out in the next, so a fast
# stream makes fewer, larger messages and keeps the channel layer under its capacity with many
# spectators. A push after a quiet spell goes out at once, so a token waits only behind another push.
TOKEN_BATCH_SECONDS = 0.008


class Outbox:
    """Pushes to one group, in order, from code running on an event loop; tokens are batched.

    Token text goes through the page's `tokens` swap (static/js/chaoslm.js), anchored on `anchor`, an
    element every page of the group has: it appends to the element with the given id if the page has
    it, and drops the text quietly if not.
    """

    def __init__(self, group: str, anchor: str) -> None:
        self.group = group
        self.anchor = anchor
        self.items: list[list[Any]] = []  # ["html", text] or ["tokens", target id, [pieces]]
        self.wake: asyncio.Event | None = None
        self.sender: asyncio.Task[None] | None = None
        # Held while a push is in flight. A layer that sends over the network (Redis) awaits inside a push:
        # stopping the sender there would lose what it took, and `drain`'s own push could overtake it.
        self.sending = asyncio.Lock()

    def html(self, html: str) -> None:
        self.items.append(["html", html])
        self._wake()

    def tokens(self, target: str, text: str) -> None:
        last = self.items[-1] if self.items else None
        if last is not None and last[0] == "tokens" and last[1] == target:
            last[2].append(text)
        else:
            self.items.append(["tokens", target, [text]])
        self._wake()

    def reset(self, target: str) -> None:
        self.html(f'<div hx-swap-oob="tokens:{self.anchor}"><span data-into="{target}" data-reset></span></div>')

    def _wake(self) -> None:
        if self.sender is None:
            self.wake = asyncio.Event()
            self.sender = asyncio.get_running_loop().create_task(self._run())
        assert self.wake is not None
        self.wake.set()

    async def _run(self) -> None:
        assert self.wake is not None
        while True:
            await self.wake.wait()
            self.wake.clear()
            async with self.sending:
                await push(self.group, self._take())
            await asyncio.sleep(TOKEN_BATCH_SECONDS)

    def _take(self) -> str:
        parts = []
        for item in self.items:
            if item[0] == "html":
                parts.append(item[1])
            else:
                text = escape("".join(item[2]))
                parts.append(f'<div hx-swap-oob="tokens:{self.anchor}"><span data-into="{item[1]}">{text}</span></div>')
        self.items.clear()
        return "".join(parts)

    async def drain(self) -> None:
        """Stop the sender once its push in flight has gone out, then send what is left."""
        async with self.sending:
            if self.sender is not None:
                self.sender.cancel()
                self.sender = None
            await push(self.group, self._take())
