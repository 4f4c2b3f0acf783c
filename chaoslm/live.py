"""The one place that talks to the channel layer: pushing rendered HTML fragments to a page's group.

Pages join one group each (a debate's, a room's); consumers forward what arrives here to the socket.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.core.cache import cache
from django.db import connections
from django.utils.html import escape

from chaoslm.embedded_layer import EmbeddedChannelLayer

PUSH_TYPE = "push.html"
CLOSE_TYPE = "push.close"

logger = logging.getLogger(__name__)

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
            layer = get_channel_layer()
            if isinstance(layer, EmbeddedChannelLayer):
                # Pushes from commands on this database (a debate run in a terminal) reach this server's pages.
                await layer.serve_relay()
            if self.on_serving is not None:
                self.on_serving()
        return await self.app(scope, receive, send)


def debate_group(debate_id: int) -> str:
    return f"debate-{debate_id}"


def debate_viewers_group(debate_id: int) -> str:
    """A debate's sockets whose viewers may not read everything its owner does (debates/privacy.py)."""
    return f"debate-{debate_id}-viewers"


def debate_groups(debate_id: int) -> tuple[str, str]:
    """A debate's two groups: its owner's and staff's sockets, and everyone else's."""
    return debate_group(debate_id), debate_viewers_group(debate_id)


def debate_tally_group(debate_id: int, phase: str) -> str:
    """A debate's sockets whose viewers voted in its `phase` and so may watch that vote's tally move."""
    return f"debate-{debate_id}-tally-{phase}"


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


# Presence: who watches a group, readable by every process whichever Redis layer carries the pushes. The pubsub
# layer keeps no membership anyone can read (a process subscribes to a channel per group it has members in, and
# Redis' subscription counts are per channel and node), so each process says for itself which groups it has
# sockets in: a sorted set per group, `live-presence:<group>`, of process ids scored by when that word expires.
# A process marks a group as its first socket joins and unmarks it as its last leaves, and renews its marks every
# PRESENCE_BEAT seconds; a process that dies without unmarking lapses PRESENCE_SECONDS later (until then its
# groups are drawn for nobody, which costs only the drawing).
PRESENCE_SECONDS = 60.0
PRESENCE_BEAT = 20.0
_process = secrets.token_hex(8)
_joined: dict[str, int] = {}  # group -> this process's sockets in it
_presence: dict[asyncio.AbstractEventLoop, tuple[Any, asyncio.Task[None]]] = {}  # loop -> (Redis client, beat)


def presence_key(group: str) -> str:
    return f"live-presence:{group}"


def _shared() -> bool:
    return not isinstance(get_channel_layer(), EmbeddedChannelLayer)


def _redis() -> Any:
    """This loop's Redis client for presence, its heartbeat started with it."""
    loop = asyncio.get_running_loop()
    held = _presence.get(loop)
    if held is None or held[1].done():
        import redis.asyncio as redis
        from django.conf import settings

        client = held[0] if held is not None else redis.Redis.from_url(settings.REDIS_URL)
        held = _presence[loop] = (client, loop.create_task(_beat(client)))
    return held[0]


async def _mark(client: Any, groups: list[str]) -> None:
    expires = time.time() + PRESENCE_SECONDS
    async with client.pipeline(transaction=False) as pipe:
        for group in groups:
            pipe.zadd(presence_key(group), {_process: expires})
            pipe.expire(presence_key(group), int(PRESENCE_SECONDS) + 1)
        await pipe.execute()


async def _beat(client: Any) -> None:
    while True:
        await asyncio.sleep(PRESENCE_BEAT)
        groups = [group for group, count in list(_joined.items()) if count > 0]
        if groups:
            try:
                await _mark(client, groups)
            except Exception:  # Redis away for a moment: the next beat tries again, before the marks lapse
                logger.warning("live presence: could not renew %s groups in Redis", len(groups), exc_info=True)


async def _arrive(group: str) -> None:
    count = _joined.get(group, 0) + 1
    _joined[group] = count
    if count == 1:
        await _mark(_redis(), [group])


async def _depart(group: str) -> None:
    count = _joined.get(group, 0) - 1
    if count > 0:
        _joined[group] = count
        return
    _joined.pop(group, None)
    await _redis().zrem(presence_key(group), _process)


async def look_for_audience(group: str) -> None:
    """Ask Redis whether any process has a socket in `group`, for `has_audience` (one round trip)."""
    if not _shared():
        return
    members = await _redis().zcount(presence_key(group), time.time(), "+inf")
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


def push_to_debate_sync(debate_id: int, html: str) -> None:
    """`push_sync` to every page of a debate, whoever views it: `html` must hold nothing private."""
    for group in debate_groups(debate_id):
        push_sync(group, html)


def later(seconds: float, work: Callable[[], None]) -> None:
    """Run the synchronous `work` once, `seconds` from now, on a thread of its own, its database connections
    closed after and a failure logged. A web server schedules it on its own loop, from which a push reaches the
    in-memory layer's queues safely; anywhere else (a command, a test) a timer thread runs it."""
    loop = serving_loop()
    if loop is None:
        timer = threading.Timer(seconds, _logged(work, close_connections=True))
        timer.daemon = True
        timer.start()
        return

    async def run() -> None:
        await asyncio.sleep(seconds)
        await database_sync_to_async(_logged(work))()

    asyncio.run_coroutine_threadsafe(run(), loop)


def _logged(work: Callable[[], None], *, close_connections: bool = False) -> Callable[[], None]:
    def run() -> None:
        try:
            work()
        except Exception:
            logger.exception("work scheduled with live.later failed")
        finally:
            if close_connections:
                connections.close_all()

    return run


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
        self.channel = await get_channel_layer().new_channel("listener.")
        await join(self.group, self.channel)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await leave(self.group, self.channel)

    async def next(self, timeout: float) -> str | None:
        try:
            message = await asyncio.wait_for(get_channel_layer().receive(self.channel), timeout)
        except TimeoutError:
            return None
        return self.CLOSED if message.get("type") == CLOSE_TYPE else message.get("html", "")


def arrived(channel_name: str) -> list[dict[str, Any]]:
    """The messages already in this process for `channel_name`, taken without waiting, at most about
    MAX_PUSH_CHARS of HTML; [] on a layer other than pubsub (the default with Redis).

    A socket behind its pushes (a process short of CPU under a crowd) sends those already here as one message
    (chaoslm/consumers.py): the websocket frame, the write and the page's handling, once for all of them rather
    than once each, so a backlog shrinks instead of growing with every push. The pubsub layer keeps a queue per
    channel of what Redis delivered and has no call to take from it without waiting; its receive is the same
    `get` on the same queue."""
    layer = get_channel_layer()
    per_loop = getattr(layer, "_get_layer", None)
    if per_loop is None:
        return []
    here = per_loop()
    queue = here.channels.get(channel_name)
    taken: list[dict[str, Any]] = []
    size = 0
    while queue is not None and not queue.empty() and size < MAX_PUSH_CHARS:
        message = here.channel_layer.deserialize(queue.get_nowait())
        size += len(message.get("html", ""))
        taken.append(message)
    return taken


async def join(group: str, channel_name: str) -> None:
    """Put a socket (its channel) in `group`, and, on a layer shared between processes, say so (presence)."""
    await get_channel_layer().group_add(group, channel_name)
    if _shared():
        await _arrive(group)


async def leave(group: str, channel_name: str) -> None:
    await get_channel_layer().group_discard(group, channel_name)
    if _shared():
        await _depart(group)


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

# How long the text of a card being written is kept for the catch-ups, after its last token: longer than
# any reply takes, short enough that a worker killed mid-step leaves nothing behind for long.
WRITING_SECONDS = 3600


def writing_key(group: str) -> str:
    return f"live-writing:{group}"


def writing_html(group: str, anchor: str) -> str:
    """The cards being written in `group` and their text so far, for a (re)connecting page's catch-up.

    Each card's text comes whole (`data-reset`, from offset 0), with the generation and offset the pushes
    after it continue from: the page keeps what follows and skips what it already has (static/js/chaoslm.js).
    The text is stored before each push that carries it (`Outbox`), so a socket that joined the group before
    reading it gets every later token either here or in a push, and some in both, which the offsets undo.
    """
    writing = cache.get(writing_key(group)) or {}
    parts = []
    for target, (card, gen, text) in writing.items():
        parts.append(upsert(card, anchor))
        parts.append(_tokens_piece(anchor, target, gen, 0, text, reset=True))
    return "".join(parts)


def forget_writing(group: str) -> None:
    """No card of `group` is being written any more (its generation was stopped from elsewhere than its outbox)."""
    cache.delete(writing_key(group))


def _tokens_piece(anchor: str, target: str, gen: int | None, at: int | None, text: str, *, reset: bool = False) -> str:
    """Text for the page's `tokens` swap; without a generation and offset, it is appended as it comes."""
    where = "" if gen is None else f' data-gen="{gen}" data-at="{at}"'
    flag = " data-reset" if reset else ""
    return f'<div hx-swap-oob="tokens:{anchor}"><span data-into="{target}"{where}{flag}>{escape(text)}</span></div>'


# The most text one push carries: what piles up while a push is out (a burst of cards, a slow layer) goes in
# several. Daphne refuses a websocket message over 1 MiB, and its consumer dies of it.
MAX_PUSH_CHARS = 256 * 1024


def _messages(parts: list[str]) -> list[str]:
    """`parts` (whole fragments, in order) joined into messages of at most `MAX_PUSH_CHARS` where they allow."""
    messages: list[str] = []
    current: list[str] = []
    size = 0
    for part in parts:
        if current and size + len(part) > MAX_PUSH_CHARS:
            messages.append("".join(current))
            current, size = [], 0
        current.append(part)
        size += len(part)
    if current:
        messages.append("".join(current))
    return [message for message in messages if message]


class Outbox:
    """Pushes to one group, in order, from code running on an event loop; tokens are batched.

    Token text goes through the page's `tokens` swap (static/js/chaoslm.js), anchored on `anchor`, an
    element every page of the group has: it appends to the element with the given id if the page has
    it, and drops the text quietly if not. Each piece carries its offset in the stream (in code points, and
    a generation that a `reset` starts anew), so a page that gets a piece twice, from a catch-up and a push,
    shows it once.

    A card opened with `begin` is also kept, with its text so far, where a catch-up on any process reads it
    (`writing_html`) until `end`: a page that (re)connects mid-step shows the text written so far.

    Every push is numbered (`seq`, with this outbox's `source`): a consumer that sees a number skipped knows
    its socket missed a push (a channel layer drops messages for a channel over capacity) and has the page
    resync (chaoslm/consumers.py).
    """

    def __init__(self, group: str, anchor: str) -> None:
        self.group = group
        self.anchor = anchor
        self.items: list[list[Any]] = []  # ["html", text], ["tokens", target id, [pieces]] or ["reset", target]
        self.wake: asyncio.Event | None = None
        self.sender: asyncio.Task[None] | None = None
        # Held while a push is in flight. A layer that sends over the network (Redis) awaits inside a push:
        # stopping the sender there would lose what it took, and `drain`'s own push could overtake it.
        self.sending = asyncio.Lock()
        self.streams: dict[str, list[int]] = {}  # target id -> [generation, code points pushed]
        self.writing: dict[str, tuple[str, int, str]] = {}  # begun target id -> (card, generation, text pushed)
        self.writing_changed = False
        self.source = secrets.token_hex(6)
        self.seq = 0

    def html(self, html: str) -> None:
        self.items.append(["html", html])
        self._wake()

    def begin(self, target: str, card: str) -> None:
        """Push `card` (a card being written, holding the element `target`) and keep it for catch-ups."""
        self.items.append(["begin", target, card])
        self._wake()

    def end(self, target: str) -> None:
        """The card being written whose text goes to `target` was saved (or dropped): stop keeping it."""
        self.items.append(["end", target])
        self._wake()

    def tokens(self, target: str, text: str) -> None:
        last = self.items[-1] if self.items else None
        if last is not None and last[0] == "tokens" and last[1] == target:
            last[2].append(text)
        else:
            self.items.append(["tokens", target, [text]])
        self._wake()

    def reset(self, target: str) -> None:
        self.items.append(["reset", target])
        self._wake()

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
                await self._push(self._take())
            await asyncio.sleep(TOKEN_BATCH_SECONDS)

    async def _push(self, parts: list[str]) -> None:
        # The text kept for catch-ups is stored before the push that carries it goes out (see `writing_html`).
        if self.writing_changed:
            self.writing_changed = False
            # Synchronous: one local round trip, where the cache's async methods would queue behind the
            # database calls on the one thread Django runs them in.
            if self.writing:
                cache.set(writing_key(self.group), self.writing, WRITING_SECONDS)
            else:
                cache.delete(writing_key(self.group))
        for html in _messages(parts):
            self.seq += 1
            # `sent`: when it left, for the push lag in /metrics (chaoslm/metrics.py).
            message = {"type": PUSH_TYPE, "html": html, "source": self.source, "seq": self.seq, "sent": time.time()}
            await get_channel_layer().group_send(self.group, message)

    def _take(self) -> list[str]:
        parts = []
        for item in self.items:
            kind = item[0]
            if kind == "html":
                parts.append(item[1])
            elif kind == "begin":
                target, card = item[1], item[2]
                gen = self.streams.get(target, [0, 0])[0]
                self.streams[target] = [gen, 0]
                self.writing[target] = (card, gen, "")
                self.writing_changed = True
                parts.append(upsert(card, self.anchor))
            elif kind == "end":
                self.streams.pop(item[1], None)
                if self.writing.pop(item[1], None) is not None:
                    self.writing_changed = True
            elif kind == "reset":
                stream = self.streams.get(item[1])
                if stream is None:
                    parts.append(_tokens_piece(self.anchor, item[1], None, None, "", reset=True))
                    continue
                stream[0] += 1
                stream[1] = 0
                if item[1] in self.writing:
                    self.writing[item[1]] = (self.writing[item[1]][0], stream[0], "")
                    self.writing_changed = True
                parts.append(_tokens_piece(self.anchor, item[1], stream[0], 0, "", reset=True))
            else:
                target = item[1]
                # A carriage return would not survive the page's HTML parser, and the offsets count what does.
                text = "".join(item[2]).replace("\r", "")
                stream = self.streams.get(target)
                if stream is None:  # a stream with no begun card (a room's): appended as it comes
                    parts.append(_tokens_piece(self.anchor, target, None, None, text))
                    continue
                parts.append(_tokens_piece(self.anchor, target, stream[0], stream[1], text))
                stream[1] += len(text)
                if target in self.writing:
                    card, gen, written = self.writing[target]
                    self.writing[target] = (card, gen, written + text)
                    self.writing_changed = True
        self.items.clear()
        return parts

    async def drain(self) -> None:
        """Stop the sender once its push in flight has gone out, then send what is left."""
        async with self.sending:
            if self.sender is not None:
                self.sender.cancel()
                self.sender = None
            await self._push(self._take())
