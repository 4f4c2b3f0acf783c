"""The line in front of the embedded model (chaoslm/llm/slots.py), against the test server answering one request
at a time as llama.cpp's does: a call waiting for the model does not time out, hears how many are ahead, and the
line holds across processes, even when one dies holding the model."""

import asyncio
import dataclasses
import itertools
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from chaoslm.llm import Callbacks, Endpoint, Policy, chat, local_model
from chaoslm.llm.endpoints import default_endpoint
from personas.models import Persona, import_personas

ROOT = Path(__file__).resolve().parents[2]
HELLO = [{"role": "user", "content": "Hello"}]


def embedded(server) -> Endpoint:
    return Endpoint(name="embedded", base_url=server.url, api_key="", model="test-model", slots=1)


def served_one_at_a_time(requests) -> bool:
    """Each request reached the server only after the one before was answered: nobody waited in its queue."""
    ordered = sorted(requests, key=lambda r: r.started)
    return all(later.started >= earlier.finished for earlier, later in itertools.pairwise(ordered))


def test_the_default_endpoint_is_the_embedded_model_with_a_slot_a_core_unless_set(settings, monkeypatch):
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_SLOTS = 1
    endpoint = default_endpoint()
    assert endpoint.base_url == local_model.base_url() and endpoint.slots == 1
    settings.CHAOSLM_LOCAL_SLOTS = 0
    monkeypatch.setattr(local_model.os, "cpu_count", lambda: 4)
    assert default_endpoint().slots == 4
    assert "--parallel" in (argv := local_model.command()) and argv[argv.index("--parallel") + 1] == "4"
    # Each slot has the whole context: llama.cpp's server splits the one it is given among them.
    assert argv[argv.index("--n_ctx") + 1] == str(4 * settings.CHAOSLM_LOCAL_MODEL_CONTEXT)
    monkeypatch.setattr(local_model.os, "cpu_count", lambda: None)  # unknown: two cores assumed
    assert default_endpoint().slots == 2
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    assert default_endpoint().slots == 0


def most_at_once(requests) -> int:
    """The most requests the server was answering at the same moment."""
    moments = sorted([(r.started, 1) for r in requests] + [(r.finished, -1) for r in requests])
    return max(itertools.accumulate(change for _, change in moments))


def test_a_server_of_two_slots_answers_two_calls_at_once_and_the_others_hear_their_place(llm_server):
    # Four calls on two slots: the first two are answered at once, the first in 0.5 s, the second in 1.5 s (a 1 s
    # hang after the latency). The third waits for one of them (1 ahead) and has the first's slot at 0.5 s; the
    # fourth waits for two (2), then, once the third has a slot, for one (1), and has the third's slot at 1.0 s.
    # Apart on purpose: two calls that end in the same instant free both slots at once, and the fourth then goes
    # from 2 straight to 0, as truthfully.
    llm_server.configure(latency=0.5, hang_seconds=1.0, rules=[{"match": "^Second$", "fault": "hang"}])
    endpoint = dataclasses.replace(embedded(llm_server), slots=2)
    names = ["First", "Second", "Third", "Fourth"]
    heard = {name: [] for name in names}

    async def four_at_once():
        # Room for the second's 1.5 s.
        policy = Policy(timeout=2.0)
        calls = (
            chat(endpoint, [{"role": "user", "content": name}], policy=policy, callbacks=Callbacks(on_queued=h.append))
            for name, h in heard.items()
        )
        return await asyncio.gather(*calls)

    results = asyncio.run(four_at_once())
    assert all(r.text and r.attempts == 1 for r in results)
    assert heard == {"First": [], "Second": [], "Third": [1, 0], "Fourth": [2, 1, 0]}
    assert len(llm_server.requests) == 4 and most_at_once(llm_server.requests) == 2
    sent = {r.last_user: r.started for r in llm_server.requests}
    assert sent["Third"] - sent["First"] >= 0.5 and sent["Fourth"] - sent["First"] >= 1.0


def test_calls_waiting_for_the_model_do_not_time_out_and_hear_how_many_are_ahead(llm_server):
    # Each answer takes 0.5 s; the fourth call waits 1.5 s for the model, longer than the 0.8 s timeout (and
    # than its 1.2 s retry): counted against the timeout, as before the line, that wait failed the call.
    llm_server.configure(one_at_a_time=True, latency=0.5)
    heard = [[] for _ in range(4)]

    async def four_at_once():
        return await asyncio.gather(
            *(
                chat(embedded(llm_server), HELLO, policy=Policy(timeout=0.8), callbacks=Callbacks(on_queued=h.append))
                for h in heard
            )
        )

    results = asyncio.run(four_at_once())
    assert all(r.text and r.attempts == 1 for r in results)
    assert heard == [[], [1, 0], [2, 1, 0], [3, 2, 1, 0]]
    assert len(llm_server.requests) == 4 and served_one_at_a_time(llm_server.requests)


def test_a_call_that_timed_out_keeps_the_model_until_it_has_finished_the_abandoned_reply(llm_server):
    # The first request takes 2 s; the server writes it to its end though its caller gives up at 0.5 s.
    llm_server.configure(one_at_a_time=True, hang_seconds=2.0, rules=[{"match": "Slow", "fault": "hang", "times": 1}])
    heard = []

    async def slow_then_quick():
        slow = asyncio.create_task(
            chat(embedded(llm_server), [{"role": "user", "content": "Slow"}], policy=Policy(0.5))
        )
        await asyncio.sleep(0.1)  # the slow call has the model
        callbacks = Callbacks(on_queued=heard.append)
        quick = await chat(embedded(llm_server), HELLO, policy=Policy(timeout=0.5), callbacks=callbacks)
        return await slow, quick

    slow, quick = asyncio.run(slow_then_quick())
    assert slow.text and quick.text and heard == [1, 0]
    # The quick call was sent once the abandoned reply was done, not into the server's queue behind it
    # (where it timed out twice: 0.5 s, then 0.75 s), and answered at once; the slow call's retry came after it.
    abandoned, quick_request, retry = llm_server.requests
    assert (abandoned.last_user, quick_request.last_user, retry.last_user) == ("Slow", "Hello", "Slow")
    assert quick_request.started >= abandoned.served + 2.0
    assert retry.started >= quick_request.finished


def test_an_endpoint_without_slots_sends_everything_at_once(llm_server):
    llm_server.configure(latency=0.3)
    heard = []
    endpoint = Endpoint(name="cloud", base_url=llm_server.url, api_key="", model="test-model")

    async def three_at_once():
        callbacks = Callbacks(on_queued=heard.append)
        calls = (chat(endpoint, HELLO, policy=Policy(timeout=2), callbacks=callbacks) for _ in "abc")
        return await asyncio.gather(*calls)

    asyncio.run(three_at_once())
    assert heard == []
    assert max(r.started for r in llm_server.requests) < min(r.finished for r in llm_server.requests)


def _child(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, stdout=subprocess.PIPE, text=True)


def test_the_line_holds_across_processes(llm_server):
    # The other process's call takes a second (a "hang" that ends); ours would be answered at once.
    llm_server.configure(one_at_a_time=True, hang_seconds=1.0, rules=[{"match": "other process", "fault": "hang"}])
    other = _child(
        f"""
        import asyncio
        from chaoslm.llm import Endpoint, Policy, chat
        endpoint = Endpoint(name="embedded", base_url="{llm_server.url}", api_key="", model="test-model", slots=1)
        messages = [{{"role": "user", "content": "From the other process"}}]
        print(asyncio.run(chat(endpoint, messages, policy=Policy(timeout=5))).text)
        """
    )
    try:
        deadline = time.monotonic() + 30
        while not llm_server.requests:  # the other process has the model
            assert time.monotonic() < deadline and other.poll() is None, "the other process never called"
            time.sleep(0.02)
        heard = []
        mine = asyncio.run(
            chat(embedded(llm_server), HELLO, policy=Policy(timeout=0.5), callbacks=Callbacks(on_queued=heard.append))
        )
        assert other.wait(30) == 0
    finally:
        other.kill()
    assert mine.text and heard == [1, 0]
    theirs, ours = llm_server.requests
    assert theirs.last_user == "From the other process" and ours.last_user == "Hello"
    assert served_one_at_a_time(llm_server.requests)


def test_a_process_killed_while_holding_the_model_does_not_block_it(llm_server):
    holder = _child(
        f"""
        import asyncio, time
        from chaoslm.llm import slots
        async def hold():
            async with slots.slot("{llm_server.url}", 1, None):
                print("holding", flush=True)
                time.sleep(600)
        asyncio.run(hold())
        """
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        heard = []
        answered = threading.Event()
        result = []

        def call():
            callbacks = Callbacks(on_queued=heard.append)
            result.append(asyncio.run(chat(embedded(llm_server), HELLO, policy=Policy(timeout=2), callbacks=callbacks)))
            answered.set()

        caller = threading.Thread(target=call)
        caller.start()
        deadline = time.monotonic() + 10
        while heard != [1]:
            assert time.monotonic() < deadline, heard
            time.sleep(0.02)
        assert not answered.is_set() and llm_server.requests == []
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        caller.join(10)
    finally:
        holder.kill()
    assert result and result[0].text and heard == [1, 0]


@pytest.fixture
def embedded_is_the_test_server(llm_server, settings):
    """No endpoint configured, so the embedded model it is; and it is the test server, one request at a time (an
    embedded model of one slot)."""
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_SLOTS = 1
    settings.CHAOSLM_LOCAL_MODEL_HOST = "127.0.0.1"
    settings.CHAOSLM_LOCAL_MODEL_PORT = llm_server.port
    llm_server.configure(one_at_a_time=True, latency=0.05)
    return llm_server


async def _pushes(layer, channel) -> str:
    pushes = []
    while True:
        try:
            pushes.append((await asyncio.wait_for(layer.receive(channel), 0.5))["html"])
        except TimeoutError:
            return "".join(pushes)


def _statuses(html: str, element_id: str) -> list[str]:
    return [part.split("</div>")[0] for part in html.split(f'<div id="{element_id}"')[1:]]


@pytest.mark.django_db(transaction=True)
def test_a_debate_waiting_for_the_embedded_model_says_so_on_its_status_line(embedded_is_the_test_server):
    from channels.layers import get_channel_layer

    from chaoslm import live
    from debates.broadcast import DebateBroadcaster
    from debates.engine import run_debate
    from debates.models import Debate
    from debates.setup import SeatChoice, create_debate

    personas = ROOT / "personas" / "samples"
    files = ["ada-sterling.yaml", "marcus-vale.yaml", "judge-okafor.yaml"]
    saved = {p.name: p for p in import_personas([(f, (personas / f).read_text()) for f in files])}
    seats = {"a": "Ada Sterling", "b": "Marcus Vale", "judge": "Judge Ines Okafor"}
    debate = create_debate(
        format_name="duel",
        topic="Should cities ban private cars?",
        premise="Cities should ban private cars",
        seats={key: SeatChoice(saved[name]) for key, name in seats.items()},
        options={"turns": 2},
    )
    layer = get_channel_layer()

    async def watch_and_run():
        channel = await layer.new_channel()
        await live.join(live.debate_group(debate.pk), channel)
        finished = await run_debate(debate.pk, DebateBroadcaster(debate.pk))
        return finished, await _pushes(layer, channel)

    finished, html = asyncio.run(watch_and_run())
    assert finished.status == Debate.Status.COMPLETED, finished.error_text
    statuses = _statuses(html, "status")
    # The duel's steps run side by side (both plans; the judge beside the next debater): one waits for the other.
    assert any("waiting for the embedded model (1 ahead)" in s for s in statuses)
    assert "waiting for the embedded model" not in statuses[-1]
    assert served_one_at_a_time(embedded_is_the_test_server.requests)


@pytest.mark.django_db(transaction=True)
def test_a_room_waiting_for_the_embedded_model_says_so_on_its_status_line(embedded_is_the_test_server):
    from channels.layers import get_channel_layer

    from chaoslm import live
    from rooms import services
    from rooms.broadcast import RoomBroadcaster
    from rooms.engine import manual_round
    from rooms.models import Room

    owner = get_user_model().objects.create_user("olive", password="pw")
    import_personas([(f"{n}.yaml", f"name: {n}\nrole: chat\npersonality: You are {n}.\n") for n in ("Al", "Bo")])
    room = Room.objects.create(title="Chat", owner=owner, response_delay=1, max_messages=0)
    for name in ("Al", "Bo"):
        services.add_agent(room, Persona.objects.get(name=name))
    services.post_message(room, "olive", "Hello both")
    layer = get_channel_layer()

    async def watch_and_run():
        channel = await layer.new_channel()
        await live.join(live.room_group(room.pk), channel)
        saved = await manual_round(room.pk, RoomBroadcaster(room.pk))
        return saved, await _pushes(layer, channel)

    saved, html = asyncio.run(watch_and_run())
    assert sorted(m.author for m in saved) == ["Al", "Bo"]
    statuses = _statuses(html, "room-status")
    # Both agents asked at once: one was answered while the other waited, one call ahead of it.
    assert any("waiting for the embedded model (1 ahead)" in s for s in statuses)
    assert "waiting for the embedded model" not in statuses[-1]
    assert served_one_at_a_time(embedded_is_the_test_server.requests)
