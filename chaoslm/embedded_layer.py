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
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from copy import deepcopy
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

CLEAN_EVERY_SECONDS = 1.0
_PLAIN = (str, bytes, int, float, bool, type(None))


class EmbeddedChannelLayer(InMemoryChannelLayer):
    """`InMemoryChannelLayer` for one process with many sockets per group (the embedded default)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cleaned_at = 0.0

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
        self._clean_expired()
        expires = time.time() + self.expiry
        # Members were checked when they joined; each gets a copy of its own, as from `send`.
        for channel in list(self.groups.get(group, ())):
            # As Channels does: a member too far behind misses this message.
            with contextlib.suppress(ChannelFull):
                self._put(channel, _own_copy(message), expires)

    def has_members(self, group: str) -> bool:
        return bool(self.groups.get(group))

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
