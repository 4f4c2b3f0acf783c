"""A spectator that stops reading costs only itself: the others get every push in order, and the server,
rather than holding an ever longer backlog for it, drops its connection for its page to catch up."""

import asyncio
import base64
import os
import re
import socket
import struct

import aiohttp
import pytest

pytestmark = pytest.mark.scaleout

PUSHES = 3000
BACKLOG = 2_000_000  # a second of pushes: on a loaded machine the reader that keeps up may fall far behind for a moment
FILLER = "x" * 2000
MARK = re.compile(r'data-n="(\d+)"')

# Pushes through the live outbox, as a debate's broadcaster does: numbered, batched, to the debate's viewers.
PUSH = """
import asyncio
from chaoslm import live

async def main():
    outbox = live.Outbox(live.debate_viewers_group({debate}), "#transcript")
    for n in range({pushes}):
        outbox.html('<p data-n="' + str(n) + '">{filler}</p>')
        if n % 10 == 0:
            await asyncio.sleep(0.01)
    await outbox.drain()

asyncio.run(main())
"""


def open_without_reading(base: str, path: str) -> socket.socket:
    """A websocket opened by hand, with a small receive buffer, whose reader then does not read."""
    host, port = base.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: {base}\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def read_frames(sock: socket.socket, quiet: float) -> tuple[list[str], int | None, bool]:
    """Everything the server sent: (text messages, the close code if a close frame came, whether it ended)."""
    sock.settimeout(quiet)
    data = b""
    ended = False
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            ended = True
            break
        if not chunk:
            ended = True
            break
        data += chunk
    texts, code, at = [], None, 0
    while at + 2 <= len(data):
        opcode, length = data[at] & 0x0F, data[at + 1] & 0x7F
        at += 2
        if length == 126:
            (length,) = struct.unpack(">H", data[at : at + 2])
            at += 2
        elif length == 127:
            (length,) = struct.unpack(">Q", data[at : at + 8])
            at += 8
        if at + length > len(data):
            break  # cut short: the server dropped the connection mid-frame
        payload = data[at : at + length]
        at += length
        if opcode == 1:
            texts.append(payload.decode())
        elif opcode == 8:
            code = struct.unpack(">H", payload[:2])[0]
            ended = True
    return texts, code, ended


def test_a_spectator_that_stops_reading_is_told_to_resync_and_the_others_get_everything(stack):
    stack.env["CHAOSLM_LIVE_BACKLOG_BYTES"] = str(BACKLOG)
    base = stack.start_web()
    debate_id = stack.enqueue_duel("Who reads slowly?")  # public, queued: no worker runs it
    path = f"/ws/debates/{debate_id}/"
    slow = open_without_reading(base, path)

    async def fast_spectator() -> list[int]:
        seen = []
        async with aiohttp.ClientSession() as session:
            url = base.replace("http", "ws", 1) + path
            async with session.ws_connect(url, headers={"Origin": base}) as ws:
                await ws.receive()  # the catch-up
                pusher = asyncio.create_task(
                    asyncio.to_thread(
                        stack.manage, "shell", "-c", PUSH.format(debate=debate_id, pushes=PUSHES, filler=FILLER)
                    )
                )
                while len(seen) < PUSHES:
                    message = await asyncio.wait_for(ws.receive(), 60)
                    assert message.type == aiohttp.WSMsgType.TEXT, message
                    seen.extend(int(n) for n in MARK.findall(message.data))
                await pusher
        return seen

    seen = asyncio.run(fast_spectator())
    assert seen == list(range(PUSHES))  # every push, once, in order, with a reader stalled beside it

    # Read now, before daphne's own keepalive (a ping every 20 s, 30 s for the answer) would drop a reader this
    # silent: the server has already stopped holding more for it and closed it. It got what the buffers held,
    # not everything. (A server that held it all would hand over all of it now, and keep the socket open.)
    texts, code, ended = read_frames(slow, quiet=3)
    received = sum(len(MARK.findall(text)) for text in texts)
    assert received < PUSHES
    assert ended
    assert code is None  # dropped at once (daphne cannot send 1013): the page reconnects after 1006
    slow.close()
