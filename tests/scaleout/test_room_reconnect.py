"""A room in auto mode on a worker, watched through its share link: a socket cut while an answer is being written
reconnects and gets the answer's text written so far (more than it had), then the rest, each word once; the
messages it ends with are those of a fresh load of the page."""

import asyncio
import re
from types import SimpleNamespace

import aiohttp
import httpx2 as httpx
import pytest

from bench import _spectator
from bench._spectator import RoomWatcher

pytestmark = pytest.mark.scaleout

MESSAGE = re.compile(r'<article id="msg-(\d+)" class="msg msg-([a-z]+)')
SETUP = """
from django.contrib.auth.models import User
from personas.models import Persona
from rooms import services, work
owner = User.objects.create_user("rhea")
personas = Persona.objects.filter(name__in=["Ada Sterling", "Marcus Vale"])
room = services.create_room(owner, "Cut mid-answer", "unlisted", personas)
room.max_messages = 3
room.save()
services.set_mode(room, "auto")
work.start_auto(room.pk)
print(room.pk, room.share_token)
"""


def test_a_room_socket_cut_mid_answer_catches_up_the_text_being_written(stack, _llm_server_process, monkeypatch):
    _llm_server_process.configure(latency=0.1, token_rate=8, reply_words=40)
    # The watcher waits a random part of a second before reconnecting, as the page does; here the whole second,
    # so that more of the answer (8 words a second) is written while it is away.
    monkeypatch.setattr(_spectator, "random", SimpleNamespace(random=lambda: 1.0))
    base = stack.start_web()
    stack.start_worker("w", threads=2)
    room_id, token = stack.manage("shell", "-c", SETUP).stdout.split()[-2:]
    watcher = RoomWatcher([base.replace("http", "ws", 1) + f"/ws/room-share/{token}/"])
    cut: dict[str, object] = {}  # the text on the page when its socket was cut, and the catch-ups it had by then

    async def watch():
        done = asyncio.Event()
        async with aiohttp.ClientSession() as session:
            task = asyncio.ensure_future(watcher.watch(session, done))
            # Mid-answer: a few words of an agent's answer are on the page.
            while not any(3 <= len(stream.text.split()) <= 20 for stream in watcher.writing.values()):
                await asyncio.sleep(0.05)
            # (The first connect may itself have come mid-answer, and caught up then.)
            cut["text"] = next(stream.text for stream in watcher.writing.values() if stream.text)
            cut["resumed"] = len(watcher.resumed)
            await watcher.socket.close()  # as a dropped connection: the page reconnects by itself
            while len(watcher.resumed) <= cut["resumed"]:
                await asyncio.sleep(0.05)
            # Until auto mode pauses at the room's limit (3 messages), and its last answer is on the page.
            while "Conversation paused" not in httpx.get(f"{base}/r/{token}/").text or watcher.writing:
                await asyncio.sleep(0.2)
            await asyncio.sleep(1)
            done.set()
            await watcher.socket.close()
            await task

    asyncio.run(asyncio.wait_for(watch(), 240))

    # The catch-up brought the answer being written: what the page had when cut, and more written meanwhile.
    # (Its first after the cut: a loaded machine may have dropped the socket again later, as a reader behind its
    # pushes, and that reconnect catches up too.)
    assert len(watcher.resumed) >= cut["resumed"] + 1
    resumed = watcher.resumed[cut["resumed"]]
    assert resumed.startswith(cut["text"]) and len(resumed) > len(cut["text"])
    assert watcher.gaps == 0 and watcher.late == 0
    page = httpx.get(f"{base}/r/{token}/").text
    fresh = dict(MESSAGE.findall(page))
    assert {str(pk): kind for pk, kind in watcher.messages.items()} == fresh
    # Each answer's text as streamed is its saved text, the one cut mid-way included: no word lost or doubled.
    saved = stack.manage(
        "shell",
        "-c",
        f"from rooms.models import RoomMessage\n"
        f"for m in RoomMessage.objects.filter(room_id={room_id}, kind='agent'): print(repr(m.content))",
    ).stdout.splitlines()
    answers = [eval(line).split() for line in saved if line.startswith("'") or line.startswith('"')]
    assert len(answers) >= 2
    assert [text.split() for text in watcher.streamed] == answers
