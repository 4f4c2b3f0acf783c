"""The Redis channel layer as the settings build it: a page's socket outlives a quiet spell."""

import os
import subprocess
import sys

import pytest

from tests.conftest import require
from tests.scaleout.conftest import ROOT

pytestmark = pytest.mark.scaleout

# In a process of its own: the settings read REDIS_URL when they are first imported.
QUIET_THEN_PUSH = """
import asyncio, django, secrets, time
django.setup()
from channels.layers import get_channel_layer

async def main():
    layer = get_channel_layer()
    spectator = await layer.new_channel()
    group = f"quiet-{secrets.token_hex(4)}"
    await layer.group_add(group, spectator)

    async def push_later():
        await asyncio.sleep(7)  # longer than a blocking read of Redis, and than redis-py's default read timeout
        await layer.group_send(group, {"type": "push.html", "html": "<p>late</p>"})

    pusher = asyncio.ensure_future(push_later())
    started = time.monotonic()
    message = await layer.receive(spectator)
    await pusher
    print(message["html"], round(time.monotonic() - started))

asyncio.run(main())
"""


def test_a_socket_waiting_through_a_quiet_spell_still_gets_the_next_push():
    redis_url = os.environ.get("CHAOSLM_TEST_REDIS_URL")
    require(redis_url, "Redis (CHAOSLM_TEST_REDIS_URL)")
    env = {**os.environ, "REDIS_URL": redis_url.rsplit("/", 1)[0] + "/14", "DJANGO_SETTINGS_MODULE": "chaoslm.settings"}
    env.pop("CHAOSLM_CHANNEL_LAYER", None)  # the default (pubsub)
    result = subprocess.run(
        [sys.executable, "-c", QUIET_THEN_PUSH], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["<p>late</p>", "7"]
