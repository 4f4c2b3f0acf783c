"""The floor for bench/live_latency.py: the same token stream through a bare Channels consumer.

daphne with ChaosLM's settings (TCP_NODELAY on its sockets) but Channels' own in-memory channel layer,
as Channels ships it (ChaosLM's embedded layer is part of what is measured against it; with REDIS_URL, for
bench/crowd.py's processes sharing one Redis, the Redis layer ChaosLM's settings choose), one
`AsyncWebsocketConsumer` that joins a group and forwards, and `GET /replay` that pushes a token stream
to that group as ChaosLM's pushes look, each token stamped with its send time. Whatever ChaosLM adds
above this (the LLM client, the engine, the outbox, its consumer) shows as its ratio to this floor.

    daphne bench._floor:application
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any
from urllib.parse import parse_qs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.core.asgi import get_asgi_application

get_asgi_application()

from django.conf import settings  # noqa: E402

# With REDIS_URL (bench/crowd.py: several floor processes, one Redis), the layer ChaosLM's settings build for it.
if not settings.REDIS_URL:
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 1500}}
    }

from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.layers import get_channel_layer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

from config.asgi import push_without_delay  # noqa: E402

GROUP = "floor"
TOKEN = '<div hx-swap-oob="tokens:#transcript"><span data-into="ev-1-text">[t{stamp:.0f}] </span></div>'
DONE = '<div id="status" class="status status-completed"></div>'
connected: set[str] = set()


class FloorConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        await self.channel_layer.group_add(GROUP, self.channel_name)
        await self.accept()
        connected.add(self.channel_name)

    async def disconnect(self, code: int) -> None:
        connected.discard(self.channel_name)
        await self.channel_layer.group_discard(GROUP, self.channel_name)

    async def push_html(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["html"])


async def replay(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """`?tokens=N&rate=R&spectators=S`: once S sockets are in this process (0: at once), N token pushes at R a
    second, then the end."""
    query = {key: values[0] for key, values in parse_qs(scope["query_string"].decode()).items()}
    tokens, rate, spectators = int(query["tokens"]), float(query["rate"]), int(query["spectators"])
    while len(connected) < spectators:
        await asyncio.sleep(0.01)
    layer = get_channel_layer()
    for _ in range(tokens):
        await layer.group_send(GROUP, {"type": "push.html", "html": TOKEN.format(stamp=time.time() * 1e6)})
        await asyncio.sleep(1 / rate)
    await layer.group_send(GROUP, {"type": "push.html", "html": DONE})
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"done"})


push_without_delay()
application = ProtocolTypeRouter({"http": replay, "websocket": URLRouter([path("floor/", FloorConsumer.as_asgi())])})
