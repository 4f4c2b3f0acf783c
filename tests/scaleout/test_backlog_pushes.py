"""A page's socket whose web process fell behind gets the pushes waiting for it as one message, in order (the
default pubsub layer; chaoslm/consumers.py, `live.arrived`): under a crowd on a busy machine one frame, one write and
one page update for many is what keeps the backlog from growing. A socket that is not behind gets each as it comes."""

import asyncio
import os
import signal

import aiohttp
import pytest

pytestmark = pytest.mark.scaleout

# Separate pushes to a debate's viewers, numbered as a debate's outbox numbers them.
PUSH = """
import asyncio, time
from channels.layers import get_channel_layer
from chaoslm import live

async def main():
    for n in {numbers}:
        html = f'<p data-n="{{n}}"></p>'
        message = {{"type": live.PUSH_TYPE, "html": html, "source": "test", "seq": n, "sent": time.time()}}
        await get_channel_layer().group_send(live.debate_viewers_group({debate}), message)

asyncio.run(main())
"""


def push(stack, debate_id: int, numbers: list[int]) -> None:
    stack.manage("shell", "-c", PUSH.format(debate=debate_id, numbers=numbers))


def test_pushes_waiting_for_a_socket_go_out_together_in_order_and_the_next_alone(stack):
    base = stack.start_web()
    web = stack.workers[-1]
    debate_id = stack.enqueue_duel("Who falls behind?")  # public, queued: no worker runs it

    async def spectator() -> list[str]:
        got = []
        async with aiohttp.ClientSession() as session:
            url = base.replace("http", "ws", 1) + f"/ws/debates/{debate_id}/"
            async with session.ws_connect(url, headers={"Origin": base}) as ws:
                await ws.receive()  # the catch-up
                # The web process stopped (as one starved of CPU is): five pushes reach it while it does nothing.
                os.killpg(web.pid, signal.SIGSTOP)
                try:
                    await asyncio.to_thread(push, stack, debate_id, [1, 2, 3, 4, 5])
                finally:
                    os.killpg(web.pid, signal.SIGCONT)
                got.append((await asyncio.wait_for(ws.receive(), 30)).data)
                await asyncio.to_thread(push, stack, debate_id, [6])
                got.append((await asyncio.wait_for(ws.receive(), 30)).data)
                await asyncio.to_thread(push, stack, debate_id, [7])
                got.append((await asyncio.wait_for(ws.receive(), 30)).data)
        return got

    got = asyncio.run(spectator())
    assert got == [
        "".join(f'<p data-n="{n}"></p>' for n in [1, 2, 3, 4, 5]),
        '<p data-n="6"></p>',
        '<p data-n="7"></p>',
    ]
