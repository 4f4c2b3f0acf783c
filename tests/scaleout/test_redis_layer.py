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
    env = {**os.environ, "REDIS_URL": redis_url.rsplit("/", 1)[0] + "/14", "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("CHAOSLM_CHANNEL_LAYER", None)  # the default (pubsub)
    result = subprocess.run(
        [sys.executable, "-c", QUIET_THEN_PUSH], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["<p>late</p>", "7"]


# A page's socket of one deployment, listening to a group: prints what it heard before its own end marker.
LISTEN = """
import asyncio, django, sys
django.setup()
from channels.layers import get_channel_layer

async def main():
    layer = get_channel_layer()
    spectator = await layer.new_channel()
    await layer.group_add(sys.argv[1], spectator)
    print("listening", flush=True)
    # Until its own deployment's last push: whatever came before it, or "nothing" (no fixed wait, which a loaded
    # machine's slow start of the pushing process outlasted).
    heard = []
    while (html := (await asyncio.wait_for(layer.receive(spectator), 60))["html"]) != "<p>end</p>":
        heard.append(html)
    print(*heard or ["nothing"])

asyncio.run(main())
"""

PUSH = """
import asyncio, django, sys
django.setup()
from channels.layers import get_channel_layer
asyncio.run(get_channel_layer().group_send(sys.argv[1], {"type": "push.html", "html": sys.argv[2]}))
"""


@pytest.mark.parametrize(("pusher_db", "heard"), [("13", "<p>ours</p>"), ("12", "nothing")])
def test_deployments_on_two_redis_databases_do_not_hear_each_others_pushes(pusher_db, heard):
    """Redis' publish/subscribe ignores the database; each deployment's groups are its own all the same (the
    same room id in two deployments' databases, "room-1", was one group: pages showed the other's answers)."""
    redis_url = os.environ.get("CHAOSLM_TEST_REDIS_URL")
    require(redis_url, "Redis (CHAOSLM_TEST_REDIS_URL)")
    server = redis_url.rsplit("/", 1)[0]

    def env(db: str) -> dict[str, str]:
        values = {**os.environ, "REDIS_URL": f"{server}/{db}", "DJANGO_SETTINGS_MODULE": "config.settings"}
        values.pop("CHAOSLM_CHANNEL_LAYER", None)
        values.pop("CHAOSLM_CHANNEL_PREFIX", None)
        return values

    group = f"room-{os.getpid()}"
    listener = subprocess.Popen(
        [sys.executable, "-c", LISTEN, group], cwd=ROOT, env=env("13"), stdout=subprocess.PIPE, text=True
    )
    try:
        assert listener.stdout.readline().strip() == "listening"
        for db, html in ((pusher_db, "<p>ours</p>"), ("13", "<p>end</p>")):
            subprocess.run([sys.executable, "-c", PUSH, group, html], cwd=ROOT, env=env(db), check=True, timeout=60)
        out, _ = listener.communicate(timeout=60)
    finally:
        listener.kill()
    assert out.strip() == heard
