"""A crowd over two web processes, one killed mid-turn: every spectator reconnects and ends with the whole
transcript, each card once, and each streamed turn's text as it was saved, nothing lost or doubled."""

import asyncio
import re

import aiohttp
import httpx2 as httpx
import pytest

from bench._spectator import Spectator

pytestmark = pytest.mark.scaleout

SPECTATORS = 50
CARD = re.compile(r'<article id="ev-(\d+)"[^>]*data-event-id="(\d+)"')


def test_a_crowd_survives_a_web_process_killed_mid_turn(stack, _llm_server_process):
    _llm_server_process.configure(latency=0.1, token_rate=15, reply_words=30)
    bases = [stack.start_web(), stack.start_web()]
    doomed = stack.workers[0]  # the first web process
    stack.start_worker("w", threads=2)
    debate_id = stack.enqueue_duel("Does a crowd lose anything?", turns=4)
    # Spectators split over the two processes; those of the first fall back to the second, as behind a balancer.
    sockets = [base.replace("http", "ws", 1) + f"/ws/debates/{debate_id}/" for base in bases]
    spectators = [Spectator(sockets[i % 2 :] + sockets[: i % 2]) for i in range(SPECTATORS)]

    async def watch():
        done = asyncio.Event()
        async with aiohttp.ClientSession() as session:
            tasks = [asyncio.ensure_future(s.watch_until(session, done)) for s in spectators]
            # Mid-turn: a public turn is being written into the pages (spectators read no private text).
            # Bounded: a worker that never starts fails the test here rather than waiting out CI's time.
            async with asyncio.timeout(120):
                while not any(stream.text for stream in spectators[0].writing.values()):
                    await asyncio.sleep(0.05)
            stack.kill(doomed)
            await asyncio.to_thread(stack.wait_done, debate_id)
            done.set()
            await asyncio.gather(*tasks)

    asyncio.run(watch())

    transcript = stack.transcript(debate_id)
    assert transcript["status"] == "completed"
    events = [e for e in transcript["events"] if e["kind"] != "INTERNAL"]
    page = httpx.get(f"{bases[1]}/debates/{debate_id}/").text
    fresh = {int(ordinal): int(event) for ordinal, event in CARD.findall(page)}
    assert sorted(fresh) == [e["ordinal"] for e in events]
    content = {e["ordinal"]: e["content"] for e in events}
    moved, stayed = spectators[::2], spectators[1::2]  # those on the killed process, those on the other
    for index, spectator in enumerate(spectators):
        assert spectator.saved == fresh  # every card, the one written when the process died included
        assert not spectator.writing
        assert spectator.gaps == 0
        for ordinal, text in spectator.streamed.items():
            # The text a card showed when its saved card replaced it: the saved text, or (a page that came back
            # only after the step was saved) the start of it; never a word lost on the way, nor one twice.
            saved = content[ordinal].split()
            assert text.split() == saved[: len(text.split())]
            if index % 2:  # it stayed connected throughout
                assert text.split() == saved
    assert [s.connects >= 2 for s in moved] == [True] * len(moved)
    assert [s.connects for s in stayed] == [1] * len(stayed)
    # Back mid-turn on the other process, pages showed the text written so far, then the rest.
    resumed = [s for s in moved if s.resumed]
    assert resumed
    for spectator in resumed:
        for ordinal in spectator.resumed:
            assert spectator.streamed[ordinal].split() == content[ordinal].split()
