"""Who watches a debate, as every process reads it on the default (pubsub) channel layer: a socket joined in one
process is seen from another, until it leaves, and a process killed without leaving stops counting once its
presence lapses."""

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import require
from tests.scaleout.conftest import ROOT

pytestmark = pytest.mark.scaleout

# A process with one socket in a group: it joins, says so, leaves when told (a line on stdin), says so again.
WATCHER = """
import asyncio, sys, django
django.setup()
from channels.layers import get_channel_layer
from chaoslm import live

live.PRESENCE_SECONDS = float(sys.argv[2])
live.PRESENCE_BEAT = 0.5

async def main():
    layer = get_channel_layer()
    print(type(layer).__name__, flush=True)
    channel = await layer.new_channel()
    await live.join(sys.argv[1], channel)
    print("joined", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await live.leave(sys.argv[1], channel)
    print("left", flush=True)

asyncio.run(main())
"""

# Another process asks, as a debate's broadcaster does before drawing a push.
ASK = """
import asyncio, sys, django
django.setup()
from chaoslm import live

async def main():
    await live.look_for_audience(sys.argv[1])
    print(live.has_audience(sys.argv[1]))

asyncio.run(main())
"""


@pytest.fixture
def env():
    redis_url = os.environ.get("CHAOSLM_TEST_REDIS_URL")
    require(redis_url, "Redis (CHAOSLM_TEST_REDIS_URL)")
    environment = {**os.environ, "REDIS_URL": redis_url.rsplit("/", 1)[0] + "/13"}
    environment.pop("CHAOSLM_CHANNEL_LAYER", None)  # the default
    environment["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return environment


def ask(env, group: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", ASK, group], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def watch(env, group: str, lapse: float) -> subprocess.Popen:
    watcher = subprocess.Popen(
        [sys.executable, "-c", WATCHER, group, str(lapse)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert watcher.stdout.readline().strip() == "RedisPubSubChannelLayer"
    assert watcher.stdout.readline().strip() == "joined"
    return watcher


def test_a_socket_in_another_process_is_an_audience_until_it_leaves(env):
    group = f"debate-{os.getpid()}-{time.monotonic_ns()}"
    assert ask(env, group) == "False"
    watcher = watch(env, group, lapse=60)
    try:
        assert ask(env, group) == "True"
        watcher.stdin.write("\n")
        watcher.stdin.flush()
        assert watcher.stdout.readline().strip() == "left"
        assert ask(env, group) == "False"
    finally:
        watcher.kill()
        watcher.wait(10)


def test_a_killed_process_stops_counting_once_its_presence_lapses(env):
    group = f"debate-{os.getpid()}-{time.monotonic_ns()}"
    watcher = watch(env, group, lapse=3)
    time.sleep(4)  # past the lapse: the heartbeat has renewed it meanwhile
    assert ask(env, group) == "True"
    watcher.send_signal(signal.SIGKILL)
    watcher.wait(10)
    time.sleep(3.5)
    assert ask(env, group) == "False"
