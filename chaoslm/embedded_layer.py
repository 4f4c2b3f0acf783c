"""The embedded channel layer: Channels' in-memory layer, with a push costing one pass over its group.

Channels' `InMemoryChannelLayer` scans every channel's queue and every group membership for expired
entries on each `receive` and each `group_send`, and `group_send` starts a task per member. A push to N
spectators is N receives, so its cost grew with N squared: 4.7 ms of CPU a push at 100 spectators and 80
ms at 500 on this machine kind (this layer: 0.8 ms and 5 ms; bench/channel_layer.py), every token, on
the loop that also runs the debates.

Here the scan runs at most once a second (messages expire after a minute and group memberships after a
day, so a second's delay in dropping them changes nothing a consumer can see), and `group_send` puts the
message on each member's queue directly. What a consumer receives, in what order, with what capacity and
expiry, is unchanged.

The layer lives in the web server's process, so a push made in another process on the same database (a debate
run by `manage.py debate`) would reach no socket. The server therefore listens on a Unix socket named after its
database (`relay_path`), and a process that is not the server sends its pushes there too, one JSON line each;
the server hands them to its own groups. With no server listening, nothing is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import tempfile
import time
from copy import deepcopy
from pathlib import Path
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer
from django.conf import settings

CLEAN_EVERY_SECONDS = 1.0
# After a failed connection to the server's relay, pushes are not sent there again for this long (seconds).
RELAY_RETRY_SECONDS = 1.0
_PLAIN = (str, bytes, int, float, bool, type(None))


class EmbeddedChannelLayer(InMemoryChannelLayer):
    """`InMemoryChannelLayer` for one process with many sockets per group (the embedded default)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cleaned_at = 0.0
        self._relay_server: asyncio.AbstractServer | None = None
        # This process's connection to the server's relay, per event loop (a stream belongs to its loop).
        self._relay_writers: dict[asyncio.AbstractEventLoop, asyncio.StreamWriter] = {}
        self._relay_failed_at = -RELAY_RETRY_SECONDS

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned_at >= CLEAN_EVERY_SECONDS:
            self._cleaned_at = now
            super()._clean_expired()

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "message is not a dict"
        assert "__asgi_channel__" not in message
        self.require_valid_channel_name(channel)
        self._put(channel, _own_copy(message), time.time() + self.expiry)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        if self._relaying():
            await self._relay(group, message)
        self._clean_expired()
        expires = time.time() + self.expiry
        # Members were checked when they joined; each gets a copy of its own, as from `send`.
        for channel in list(self.groups.get(group, ())):
            # As Channels does: a member too far behind misses this message.
            with contextlib.suppress(ChannelFull):
                self._put(channel, _own_copy(message), expires)

    def has_members(self, group: str) -> bool:
        """Whether a socket may be in `group`: here, or, in a process that relays to a server, maybe there."""
        return bool(self.groups.get(group)) or self._relaying()

    # -- the relay between processes on one database -------------------------------------------------------------
    async def serve_relay(self) -> None:
        """In the web server, as it starts serving: take pushes from other processes on its database."""
        if self._relay_server is not None:
            return
        path = relay_path()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a server that ended without removing it
        self._relay_server = await asyncio.start_unix_server(self._take_relayed, path=str(path))
        # Its pushes are HTML put into the pages: only this user's processes (the server's own) may send them.
        path.chmod(0o600)

    async def _take_relayed(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                try:
                    sent = json.loads(line)
                    group, message = sent["group"], sent["message"]
                    self.require_valid_group_name(group)
                except (ValueError, KeyError, TypeError):
                    continue
                await self.group_send(group, message)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def _relaying(self) -> bool:
        """Whether pushes go to a server's relay: this process is not the server, and one listens."""
        return self._relay_server is None and relay_path().exists()

    async def _relay(self, group: str, message: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        writer = self._relay_writers.get(loop)
        if writer is None or writer.is_closing():
            if time.monotonic() - self._relay_failed_at < RELAY_RETRY_SECONDS:
                return
            try:
                _, writer = await asyncio.open_unix_connection(str(relay_path()))
            except OSError:
                self._relay_failed_at = time.monotonic()
                return
            self._relay_writers[loop] = writer
        try:
            writer.write(json.dumps({"group": group, "message": message}).encode() + b"\n")
            await writer.drain()
        except (OSError, TypeError, ValueError):
            # The server went away (or the message is not JSON): the push is dropped, as when nobody watches.
            self._relay_writers.pop(loop, None)
            self._relay_failed_at = time.monotonic()

    def _queue(self, channel: str) -> asyncio.Queue[tuple[float, dict[str, Any]]]:
        # Channels builds a queue (and matches the capacity patterns) on every send and throws it away
        # when the channel has one; build it only when it is missing.
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        return queue

    def _put(self, channel: str, message: dict[str, Any], expires: float) -> None:
        try:
            self._queue(channel).put_nowait((expires, message))
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None


def _own_copy(message: dict[str, Any]) -> dict[str, Any]:
    """A copy the receiver may change: shallow for plain values (every push is), else deep as Channels makes."""
    if all(isinstance(value, _PLAIN) for value in message.values()):
        return dict(message)
    return deepcopy(message)


def relay_path() -> Path:
    """The Unix socket where the web server on this database takes other processes' pushes."""
    database = settings.DATABASES["default"]
    name = f"{database['ENGINE']}:{database.get('HOST', '')}:{os.fspath(database['NAME'])}"
    return Path(tempfile.gettempdir()) / f"chaoslm-live-{hashlib.sha256(name.encode()).hexdigest()[:16]}.sock"
