"""The one place that talks to the channel layer: pushing rendered HTML fragments to a page's group.

Pages join one group each (a debate's, a room's); consumers forward what arrives here to the socket.
"""

from __future__ import annotations

import asyncio
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

PUSH_TYPE = "push.html"

# The ASGI server's event loop. The in-memory channel layer's queues belong to one loop, so in the
# embedded setup debates must run (and push) on the loop that serves the websockets.
_serving_loop: asyncio.AbstractEventLoop | None = None


def serving_loop() -> asyncio.AbstractEventLoop | None:
    return _serving_loop


class RecordServingLoop:
    """ASGI middleware that notes the server's event loop on the first connection."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        global _serving_loop
        if _serving_loop is None:
            _serving_loop = asyncio.get_running_loop()
        return await self.app(scope, receive, send)


def debate_group(debate_id: int) -> str:
    return f"debate-{debate_id}"


def room_group(room_id: int) -> str:
    return f"room-{room_id}"


async def push(group: str, html: str) -> None:
    """Send `html` (hx-swap-oob fragments) to every socket in `group`."""
    if html:
        await get_channel_layer().group_send(group, {"type": PUSH_TYPE, "html": html})


def push_sync(group: str, html: str) -> None:
    """`push` for synchronous code (views)."""
    if html:
        async_to_sync(get_channel_layer().group_send)(group, {"type": PUSH_TYPE, "html": html})


async def join(group: str, channel_name: str) -> None:
    await get_channel_layer().group_add(group, channel_name)


async def leave(group: str, channel_name: str) -> None:
    await get_channel_layer().group_discard(group, channel_name)
