"""Rooms over the test server: concurrency, what each request holds, auto mode's stops, pauses and mentions."""

import asyncio
import html
import time
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.utils import timezone

from chaoslm import runner
from personas.models import Persona, Provider, import_personas
from rooms import queue as q
from rooms import services
from rooms.engine import auto_loop, manual_round
from rooms.models import Room, RoomMessage
from rooms.queue import SELECTOR_SYSTEM, SKIP_REASON_RULE, SKIP_RULE, SUMMARY_PREFIX, summarizer_messages
from rooms.table import RoomObserver, load_room

pytestmark = pytest.mark.django_db(transaction=True)

PERSONA = "name: {n}\nrole: chat\npersonality: You are {n}.\n"


@pytest.fixture
def room(llm_server):
    owner = get_user_model().objects.create_user("olive", password="pw")
    import_personas([(f"{n}.yaml", PERSONA.format(n=n)) for n in ("Alice", "Bob", "Charlie")])
    room = Room.objects.create(title="Chat", owner=owner, response_delay=1, max_messages=0)
    for name in ("Alice", "Bob", "Charlie"):
        services.add_agent(room, Persona.objects.get(name=name))
    room.refresh_from_db()
    return room


def agent_of(request):
    return request.system.split("\n\n")[0].removeprefix("You are ").rstrip(".")


def test_a_manual_round_asks_every_agent_at_once(room, llm_server):
    llm_server.configure(latency=0.5)
    services.post_message(room, "olive", "Hello all")
    saved = asyncio.run(manual_round(room.pk))
    # All three were in flight together: each request began before any answer was finished.
    assert len(llm_server.requests) == 3
    assert max(r.started for r in llm_server.requests) < min(r.finished for r in llm_server.requests)
    assert [m.kind for m in saved] == ["pending"] * 3
    assert {m.author for m in saved} == {"Alice", "Bob", "Charlie"}


def test_every_request_carries_the_skip_rule_and_only_active_messages(room, llm_server):
    first = services.post_message(room, "olive", "The secret word is PELICAN")
    asyncio.run(manual_round(room.pk))
    kept = room.messages.filter(kind="pending", author="Alice").first()
    services.submit_pending(room, {kept.pk})
    dropped = room.messages.filter(kind="agent", active=False)
    assert dropped.count() == 2
    services.toggle_active(first)  # the person takes their own first message out
    services.post_message(room, "olive", "What now?")
    llm_server.reset()
    asyncio.run(manual_round(room.pk))
    assert len(llm_server.requests) == 3
    for request in llm_server.requests:
        text = str(request.messages)
        assert SKIP_RULE in request.system and SKIP_REASON_RULE in request.system
        assert "PELICAN" not in text
        assert all(m.content not in text for m in dropped)
        assert kept.content in text and "olive: What now?" in text
    alice = next(r for r in llm_server.requests if agent_of(r) == "Alice")
    assert {"role": "assistant", "content": kept.content} in alice.messages


def test_skips_show_as_system_lines_and_a_full_round_of_skips_stops_auto(room, llm_server):
    llm_server.configure(rules=[{"reply": "SKIP", "times": 2}, {"reply": "SKIP: nothing to add on pricing"}])
    services.post_message(room, "olive", "Anything?")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    room.refresh_from_db()
    assert room.mode == Room.Mode.MANUAL
    lines = list(room.messages.filter(kind="system").values_list("content", flat=True))
    assert lines[-4:-1] == [
        "[Alice | chat] skipped their turn",
        "[Bob | chat] skipped their turn",
        "[Charlie | chat] skipped their turn: nothing to add on pricing",
    ]
    assert lines[-1] == "Conversation paused: every agent skipped a full round"
    assert len(llm_server.requests) == 3


def test_auto_mode_stops_at_the_message_limit(room, llm_server):
    room.max_messages = 2
    room.save()
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    room.refresh_from_db()
    assert room.messages.filter(kind="agent").count() == 2
    assert list(room.messages.filter(kind="agent").values_list("author", flat=True)) == ["Alice", "Bob"]
    assert room.pause_reason == "the message limit (2) was reached" and room.mode == Room.Mode.MANUAL


def test_a_mention_puts_the_agent_next_and_agents_can_mention_each_other(room, llm_server):
    room.max_messages = 3
    room.save()
    llm_server.configure(rules=[{"match": "olive: Start", "reply": "Over to @charlie for this one.", "times": 1}])
    services.post_message(room, "olive", "Start")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    assert list(room.messages.filter(kind="agent").values_list("author", flat=True)) == ["Alice", "Charlie", "Bob"]


def test_a_rate_limit_pauses_auto_mode_with_the_wait(room, llm_server):
    llm_server.configure(rules=[{"fault": "429", "retry_after": 30}])
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    room.refresh_from_db()
    assert room.mode == Room.Mode.MANUAL and room.pause_reason == "Rate limited. Retry in 30s"
    assert room.retry_at is not None
    error = room.messages.get(kind="error")
    assert error.content.startswith("⚠️ Alice Failed to respond:") and error.data["retry_after"] == 30
    assert len(llm_server.requests) == 1  # it did not wait and retry: the person sees the countdown


def test_stopping_auto_mode_mid_generation_adds_nothing(room, llm_server):
    llm_server.configure(latency=2.0)
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)

    async def run_then_stop():
        task = asyncio.create_task(auto_loop(room.pk))
        await asyncio.sleep(0.4)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(run_then_stop())
    assert not room.messages.filter(kind__in=["agent", "pending"]).exists()
    assert room.messages.filter(kind="user").count() == 1


def test_two_auto_loops_asked_for_one_room_run_as_one(room, llm_server):
    # Two processes asked to run the room (the page opened twice, a redelivered task): one loop answers.
    room.max_messages = 3
    room.save()
    llm_server.configure(latency=0.2)
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)

    async def both():
        await asyncio.gather(auto_loop(room.pk), auto_loop(room.pk))

    asyncio.run(both())
    assert list(room.messages.filter(kind="agent").values_list("author", flat=True)) == ["Alice", "Bob", "Charlie"]
    assert len(llm_server.requests) == 3
    room.refresh_from_db()
    assert room.held_until is None


def test_switching_auto_off_stops_a_loop_that_nobody_cancels(room, llm_server, settings):
    # A loop on a Celery worker is not cancelled by the web process: it sees the mode change itself.
    settings.CHAOSLM_ROOM_POLL = 0.1
    llm_server.configure(latency=3.0)
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)

    async def run_and_switch_off():
        task = asyncio.create_task(auto_loop(room.pk))
        await asyncio.sleep(0.5)
        await asyncio.to_thread(lambda: services.set_mode(Room.objects.get(pk=room.pk), Room.Mode.MANUAL))
        await task

    asyncio.run(run_and_switch_off())
    # The generation in flight was stopped, not waited for: the server was cut off before its 3 s answer.
    (in_flight,) = llm_server.requests
    # The server notices the closed connection on its own thread, a moment after the loop has returned.
    deadline = time.monotonic() + 2.0
    while in_flight.finished is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert in_flight.finished is not None and in_flight.finished - in_flight.started < 3.0
    assert not room.messages.filter(kind__in=["agent", "pending"]).exists()
    room.refresh_from_db()
    assert room.held_until is None


def test_a_hold_left_by_a_killed_process_lapses(room, llm_server, settings):
    settings.CHAOSLM_ROOM_HOLD = 1.0
    room.max_messages = 1
    room.save()
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    Room.objects.filter(pk=room.pk).update(held_until=timezone.now() + timedelta(seconds=0.8))
    asyncio.run(auto_loop(room.pk))  # held by the dead process: nothing happens
    assert not room.messages.filter(kind="agent").exists()
    time.sleep(0.9)
    asyncio.run(auto_loop(room.pk))
    assert room.messages.filter(kind="agent").count() == 1


def test_a_round_asked_for_while_the_room_is_held_waits_for_it(room, llm_server):
    services.post_message(room, "olive", "Hello")
    lapses = time.monotonic() + 0.6
    Room.objects.filter(pk=room.pk).update(held_until=timezone.now() + timedelta(seconds=0.6))
    saved = asyncio.run(manual_round(room.pk))
    assert min(r.started for r in llm_server.requests) >= lapses  # no agent was asked before the hold lapsed
    assert [m.kind for m in saved] == ["pending"] * 3


def test_the_context_limit_stops_auto_mode(room, llm_server):
    tiny = Provider.objects.create(name="Tiny", base_url=llm_server.url, default_model="m", context_window=120)
    for agent in room.agents.all():
        agent.llm = {**agent.llm, "provider_id": tiny.pk}
        agent.save()
    services.post_message(room, "olive", "word " * 200)
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    room.refresh_from_db()
    assert room.pause_reason == "Conversation approaching model context limit"
    assert not llm_server.requests


def test_the_speaker_guard_cuts_an_agent_writing_for_another(room, llm_server):
    llm_server.configure(rules=[{"reply": "I agree.\nBob: No, you don't.\nAlice: Yes I do."}])
    services.post_message(room, "olive", "Agree?")
    asyncio.run(manual_round(room.pk))
    alice = room.messages.get(kind="pending", author="Alice")
    assert alice.content == "I agree."
    assert alice.data["speaker_guard"] == "Cut where it began writing Bob's lines."


def test_the_person_cannot_type_in_auto_mode_or_past_pending_answers(room):
    services.set_mode(room, Room.Mode.AUTO)
    with pytest.raises(services.RoomError, match="Switch to manual mode"):
        services.post_message(room, "olive", "hi")
    services.set_mode(room, Room.Mode.MANUAL)
    RoomMessage.objects.create(room=room, kind="pending", author="Alice", content="x")
    with pytest.raises(services.RoomError, match="Keep or drop the pending answers"):
        services.post_message(room, "olive", "hi")
    with pytest.raises(services.RoomError, match="before starting auto mode"):
        services.set_mode(room, Room.Mode.AUTO)


def test_joining_leaving_and_pausing_keep_the_queue_in_step(room):
    alice = room.agents.get(name="Alice")
    message = services.remove_agent(room, alice)
    assert message.content == "[Alice | chat] left the conversation"
    room.refresh_from_db()
    assert len(room.queue["order"]) == 2
    bob = room.agents.get(name="Bob")
    assert services.toggle_participation(bob).participating is False
    assert room.messages.first().content == "[Alice | chat] joined the conversation"


def test_a_new_room_s_agents_answer_in_the_order_they_were_ticked(room, client):
    personas = {p.name: p.pk for p in Persona.objects.all()}
    client.force_login(room.owner)
    order = [personas["Charlie"], personas["Alice"], personas["Bob"]]
    response = client.post(
        "/rooms/",
        {
            "title": "Ticked",
            "visibility": "private",
            "personas": list(personas.values()),
            "order": ",".join(map(str, order)),
        },
    )
    created = Room.objects.get(title="Ticked")
    assert response.status_code == 302
    names = {a.pk: a.name for a in created.agents.all()}
    assert [names[i] for i in created.queue["order"]] == ["Charlie", "Alice", "Bob"]
    # Without the order (no script), or with ids it does not know, the list's order holds.
    client.post(
        "/rooms/", {"title": "Plain", "visibility": "private", "personas": list(personas.values()), "order": "999"}
    )
    plain = Room.objects.get(title="Plain")
    names = {a.pk: a.name for a in plain.agents.all()}
    assert [names[i] for i in plain.queue["order"]] == ["Alice", "Bob", "Charlie"]


def selector_requests(llm_server):
    return [r for r in llm_server.requests if r.system == SELECTOR_SYSTEM]


def agent_authors(room):
    return list(room.messages.filter(kind="agent").values_list("author", flat=True))


def test_a_selector_room_runs_agents_in_the_order_its_selector_names_them(room, llm_server):
    import_personas([("picker.yaml", "name: Picker\nrole: chat\npersonality: You pick.\nmodel: picker-model\n")])
    room.turn_order, room.selector, room.max_messages = "selector", Persona.objects.get(name="Picker"), 3
    room.save()
    ask = "Who should speak next"
    llm_server.configure(
        rules=[
            {"match": ask, "reply": "Charlie \u2014 asked about costs", "times": 1},
            {"match": ask, "reply": "**Alice**: to answer Charlie", "times": 1},
            {"match": ask, "reply": "Bob - the critic's view", "times": 1},
            {"match": "olive: Go", "reply": "Costs are high.", "times": 1},
        ]
    )
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    assert agent_authors(room) == ["Charlie", "Alice", "Bob"]
    lines = list(room.messages.filter(kind="system", content__startswith="Next:").values_list("content", flat=True))
    assert lines == [
        "Next: Charlie \u2014 asked about costs",
        "Next: Alice \u2014 to answer Charlie",
        "Next: Bob \u2014 the critic's view",
    ]
    first, second, _ = selector_requests(llm_server)
    assert first.body["model"] == "picker-model"  # the room's selector persona's model
    assert first.messages[1]["content"] == (
        "Participants who may speak next:\n- Alice (chat)\n- Bob (chat)\n- Charlie (chat)\n\n"
        "The conversation so far (most recent last):\nolive: Go\n\nWho should speak next?"
    )
    assert second.messages[1]["content"] == (
        "Participants who may speak next:\n- Alice (chat)\n- Bob (chat)\n\n"
        "The conversation so far (most recent last):\nolive: Go\nCharlie: Costs are high.\n\n"
        "Who should speak next? Not Charlie, who just spoke."
    )
    # The agents never see the selector's lines.
    assert all("Next:" not in str(r.messages) for r in llm_server.requests if r.system != SELECTOR_SYSTEM)


def test_a_selector_answer_naming_nobody_valid_falls_back_to_round_robin_and_says_so(room, llm_server):
    room.turn_order, room.max_messages = "selector", 2
    room.save()
    llm_server.configure(rules=[{"match": "Who should speak next", "reply": "Zed \u2014 nobody here"}])
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    assert agent_authors(room) == ["Alice", "Bob"]
    lines = list(room.messages.filter(kind="system", content__startswith="Next:").values_list("content", flat=True))
    assert lines == [
        'Next: Alice \u2014 round robin, because the selector named nobody who may speak ("Zed \u2014 nobody here")',
        'Next: Bob \u2014 round robin, because the selector named nobody who may speak ("Zed \u2014 nobody here")',
    ]


def test_a_turn_announced_but_never_saved_is_taken_without_asking_the_selector_again(room, llm_server):
    room.turn_order, room.max_messages = "selector", 1
    room.save()
    llm_server.configure(rules=[{"match": "Who should speak next", "reply": "Alice \u2014 again"}])
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    # What a worker killed after the selector's line and before the turn leaves: the line, and no answer.
    bob = room.agents.get(name="Bob")
    RoomMessage.objects.create(
        room=room, kind="system", content="Next: Bob \u2014 the critic", active=False, data={"next": [bob.pk]}
    )
    asyncio.run(auto_loop(room.pk))
    assert agent_authors(room) == ["Bob"]
    assert selector_requests(llm_server) == []
    lines = list(room.messages.filter(kind="system", content__startswith="Next:").values_list("content", flat=True))
    assert lines == ["Next: Bob \u2014 the critic"]


def test_a_mention_goes_first_in_a_selector_room_without_asking_the_selector(room, llm_server):
    room.turn_order, room.max_messages = "selector", 1
    room.save()
    services.post_message(room, "olive", "@Charlie, your view?")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    assert agent_authors(room) == ["Charlie"]
    assert selector_requests(llm_server) == []


def test_in_pick_mode_the_agent_the_owner_puts_next_speaks_next_then_the_rotation_resumes(room, llm_server):
    room.max_messages = 3
    room.save()
    charlie = room.agents.get(name="Charlie")
    with pytest.raises(services.RoomError, match="turn order 'pick'"):
        services.speak_next(room, charlie)
    services.set_turn_order(room, "pick", None, False, {a.pk for a in room.agents.all()})
    services.speak_next(room, charlie)
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    assert agent_authors(room) == ["Charlie", "Alice", "Bob"]


def test_the_turn_order_form_sets_the_order_the_selector_and_its_candidates(room, client):
    client.force_login(room.owner)
    bob = room.agents.get(name="Bob")
    url = f"/rooms/{room.pk}/turn-order/"
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert 'action="' + url + '"' in page and "The same agent may speak twice in a row" in page
    selector = Persona.objects.get(name="Alice")
    response = client.post(url, {"turn_order": "selector", "selector": selector.pk, "candidates": [bob.pk]})
    assert response.status_code == 302
    room.refresh_from_db()
    assert (room.turn_order, room.selector, room.selector_repeat) == ("selector", selector, False)
    assert list(room.agents.filter(candidate=True).values_list("name", flat=True)) == ["Bob"]
    refused = client.post(url, {"turn_order": "loudest"})
    assert refused.status_code == 422 and "turn_order" in refused.content.decode()
    # Pick mode: each agent's label has "speak next", and the queue is shown in the order they are up next.
    client.post(url, {"turn_order": "pick", "candidates": [bob.pk]})
    client.post(f"/rooms/{room.pk}/agents/{bob.pk}/next/")
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert page.count(">speak next</button>") == 3
    up_next = page[page.index('class="up-next"') :]
    assert up_next.index("Bob") < up_next.index("Alice") < up_next.index("Charlie")


def test_a_quiet_agent_is_passed_over_in_auto_mode_and_the_status_says_so(room, client, llm_server):
    room.max_messages = 4
    room.save()
    bob = room.agents.get(name="Bob")
    client.force_login(room.owner)
    refused = client.post(f"/rooms/{room.pk}/agent-settings/", {f"talk-{bob.pk}": "150"})
    assert refused.status_code == 422 and "Bob's talkativeness must be a whole number from 0 to 100" in (
        html.unescape(refused.content.decode())
    )
    client.post(f"/rooms/{room.pk}/agent-settings/", {f"talk-{bob.pk}": "0"})
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    assert agent_authors(room) == ["Alice", "Charlie", "Alice", "Charlie"]
    assert all(agent_of(r) != "Bob" for r in llm_server.requests)
    Room.objects.filter(pk=room.pk).update(mode=Room.Mode.AUTO)
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert "Passed over: Bob (0%)" in page and "Bob | chat · 0%" in page


def test_a_whisper_is_answered_and_seen_only_by_its_audience_and_shown_only_to_the_owner(room, client, llm_server):
    alice = room.agents.get(name="Alice")
    room.visibility = "public"
    room.save()
    client.force_login(room.owner)
    response = client.post(f"/rooms/{room.pk}/say/", {"text": "Alice, the budget is 5k", "to": [alice.pk]})
    assert response.status_code == 200 and "seen by Alice only" in response.content.decode()
    runner.inline.wait_idle()  # the round the message started
    assert [agent_of(r) for r in llm_server.requests] == ["Alice"]  # only the whisper's audience answers it
    services.submit_pending(room, {m.pk for m in room.messages.filter(kind="pending")})
    services.post_message(room, "olive", "Everyone: thoughts?")
    llm_server.reset()
    asyncio.run(manual_round(room.pk))
    seen = {agent_of(r): str(r.messages) for r in llm_server.requests}
    assert "budget is 5k" in seen["Alice"]
    assert "budget is 5k" not in seen["Bob"] and "budget is 5k" not in seen["Charlie"]
    assert "olive: Everyone: thoughts?" in seen["Bob"]
    # The owner's page shows the whisper and who saw it; anyone else's does not show it at all.
    assert "seen by Alice only" in client.get(f"/rooms/{room.pk}/").content.decode()
    stranger = client.__class__()
    for url in (f"/rooms/{room.pk}/", f"/r/{room.share_token}/"):
        page = stranger.get(url).content.decode()
        assert "budget is 5k" not in page and "Everyone: thoughts?" in page


def test_an_agent_added_later_sees_from_when_it_joined_unless_the_owner_lets_it_see_earlier(room, client, llm_server):
    services.post_message(room, "olive", "The code word is HERON")
    asyncio.run(manual_round(room.pk))
    services.submit_pending(room, {m.pk for m in room.messages.filter(kind="pending")})
    import_personas([("dee.yaml", PERSONA.format(n="Dee"))])
    dee, _ = services.add_agent(room, Persona.objects.get(name="Dee"))
    services.post_message(room, "olive", "Welcome, Dee")
    llm_server.reset()
    asyncio.run(manual_round(room.pk))
    seen = {agent_of(r): str(r.messages) for r in llm_server.requests}
    assert "HERON" not in seen["Dee"] and "olive: Welcome, Dee" in seen["Dee"]
    assert "HERON" in seen["Alice"]
    services.submit_pending(room, set())
    client.force_login(room.owner)
    client.post(f"/rooms/{room.pk}/agent-settings/", {f"talk-{dee.pk}": "100", f"earlier-{dee.pk}": "on"})
    services.post_message(room, "olive", "Dee, catch up")
    llm_server.reset()
    asyncio.run(manual_round(room.pk))
    assert "HERON" in next(str(r.messages) for r in llm_server.requests if agent_of(r) == "Dee")


def test_at_80_percent_the_oldest_messages_fold_into_a_summary_and_auto_mode_goes_on(room, client, llm_server):
    for number in range(6):
        services.post_message(room, "olive", f"Point {number}: " + "words " * 30)
    table = load_room(room.pk)
    _level, tokens, _window = table.meter().state()
    provider = Provider.objects.create(
        name="Small", base_url=llm_server.url, default_model="m", context_window=int(tokens / 0.85)
    )
    for agent in room.agents.all():
        agent.llm = {**agent.llm, "provider_id": provider.pk}
        agent.save()
    room.max_messages = 1
    room.save()
    llm_server.configure(rules=[{"match": "Write the summary", "reply": "Olive made points 0 to 2."}])
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    summarizer, alice = llm_server.requests
    assert summarizer.messages == summarizer_messages(
        [("olive", f"Point {n}: " + ("words " * 30).strip()) for n in range(3)]
    )
    summary = room.messages.get(kind="summary")
    assert summary.content == "Olive made points 0 to 2." and summary.data["folded"] == 3
    # Alice saw the summary instead of the three oldest messages, and the rest as they were; auto mode went on.
    text = alice.messages[1]["content"]
    assert text.startswith(SUMMARY_PREFIX + "Olive made points 0 to 2.\n\nolive: Point 3:")
    assert "Point 0" not in text and "Point 5" in text
    assert agent_authors(room) == ["Alice"]
    room.refresh_from_db()
    assert room.pause_reason == "the message limit (1) was reached"
    # The originals stay on the page, marked; the summary is a card that expands and toggles like any message.
    client.force_login(room.owner)
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert "Point 0: words" in page and page.count("summarised: agents see the summary instead") == 3
    assert "What agents see instead of those messages" in page
    client.post(f"/rooms/{room.pk}/messages/{summary.pk}/toggle/")
    summary.refresh_from_db()
    assert summary.active is False


def test_the_seed_s_stop_at_95_percent_stays_an_option(room, llm_server):
    room.memory = Room.Memory.STOP
    room.save()
    for number in range(6):
        services.post_message(room, "olive", f"Point {number}: " + "words " * 30)
    _level, tokens, _window = load_room(room.pk).meter().state()
    provider = Provider.objects.create(name="Small", base_url=llm_server.url, default_model="m", context_window=tokens)
    room.agents.update(llm={"provider_id": provider.pk})
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    room.refresh_from_db()
    assert room.pause_reason == "Conversation approaching model context limit"
    assert not llm_server.requests and not room.messages.filter(kind="summary").exists()


def test_taking_the_floor_keeps_the_partial_answer_inactive_and_marked_and_opens_the_input(room, llm_server, settings):
    settings.CHAOSLM_ROOM_POLL = 0.1
    llm_server.configure(token_rate=10, reply_words=60)
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)

    class Pushes(RoomObserver):
        modes: list[str] = []

        async def message_saved(self, room, message):
            self.modes.append(room.mode)  # the room the page's status is drawn from with this message

    async def run_and_interrupt():
        task = asyncio.create_task(auto_loop(room.pk, observer=Pushes()))
        await asyncio.sleep(1.2)
        await asyncio.to_thread(lambda: services.interrupt(Room.objects.get(pk=room.pk)))
        await task

    asyncio.run(run_and_interrupt())
    # The engine's last push, the partial answer, carries the owner's manual mode, never a stale "auto".
    assert Pushes.modes == ["manual"]
    partial = room.messages.get(kind="agent")
    assert partial.author == "Alice" and partial.active is False and partial.data == {"interrupted": True}
    assert 0 < len(partial.content.split()) < 60
    lines = list(room.messages.filter(kind="system").values_list("content", flat=True))
    assert lines[-1] == "Auto mode stopped: the owner took the floor"
    room.refresh_from_db()
    assert room.mode == Room.Mode.MANUAL and room.held_until is None
    # The input is open, and no agent ever has the partial in its context.
    services.post_message(room, "olive", "My turn")
    llm_server.reset()
    llm_server.configure(token_rate=0)
    asyncio.run(manual_round(room.pk))
    assert len(llm_server.requests) == 3
    assert all(partial.content not in str(r.messages) for r in llm_server.requests)
    with pytest.raises(services.RoomError, match="the floor is yours already"):
        services.interrupt(room)


def test_switching_auto_off_without_interrupting_keeps_nothing_of_the_answer(room, llm_server, settings):
    settings.CHAOSLM_ROOM_POLL = 0.1
    llm_server.configure(token_rate=10, reply_words=60)
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)

    async def run_and_stop():
        task = asyncio.create_task(auto_loop(room.pk))
        await asyncio.sleep(1.2)
        await asyncio.to_thread(lambda: services.set_mode(Room.objects.get(pk=room.pk), Room.Mode.MANUAL))
        await task

    asyncio.run(run_and_stop())
    assert not room.messages.filter(kind="agent").exists()


def test_agents_a_room_starts_with_see_everything_and_are_not_late_joiners(room):
    assert list(room.agents.values_list("joined_after", flat=True)) == [0, 0, 0]


def test_a_round_run_twice_or_retried_asks_no_agent_a_second_time(room, llm_server):
    alice = room.agents.get(name="Alice")
    down = Provider.objects.create(name="Down", base_url="http://127.0.0.1:9/v1", default_model="m")
    alice.llm = {**alice.llm, "provider_id": down.pk}
    alice.save()
    services.post_message(room, "olive", "Hello")
    first = asyncio.run(manual_round(room.pk))  # Alice's endpoint is down
    assert sorted((m.kind, m.author) for m in first) == [("error", "Alice"), ("pending", "Bob"), ("pending", "Charlie")]
    alice.llm = {**alice.llm, "provider_id": None}
    alice.save()
    llm_server.reset()
    again = asyncio.run(manual_round(room.pk))  # a redelivered task, or Retry: only the one that failed
    assert [(m.kind, m.author) for m in again] == [("pending", "Alice")]
    assert [agent_of(r) for r in llm_server.requests] == ["Alice"]
    assert asyncio.run(manual_round(room.pk)) == []
    assert room.messages.filter(kind="pending").count() == 3


def test_a_room_saved_as_a_template_starts_new_rooms_with_its_agents_order_and_settings(room, client):
    alice, bob, charlie = (room.agents.get(name=n) for n in ("Alice", "Bob", "Charlie"))
    services.set_turn_order(room, "selector", Persona.objects.get(name="Bob"), True, {alice.pk, charlie.pk})
    services.set_agent_settings(room, {f"talk-{alice.pk}": "100", f"talk-{bob.pk}": "30", f"talk-{charlie.pk}": "0"})
    services.set_turn_order(room, "pick", None, True, {alice.pk, charlie.pk})
    services.speak_next(room, charlie)  # not a setting: the template does not keep the queue's state
    room.refresh_from_db()
    room.response_delay, room.memory = 7, Room.Memory.STOP
    room.save()
    client.force_login(room.owner)
    assert client.post(f"/rooms/{room.pk}/template/", {"name": "Three voices"}).status_code == 302
    response = client.post("/rooms/", {"title": "From the template", "visibility": "private", "template": ""})
    assert "Choose at least one persona, or a template." in response.content.decode()
    template = room.owner.room_templates.get(name="Three voices")
    response = client.post("/rooms/", {"title": "From the template", "visibility": "private", "template": template.pk})
    new = Room.objects.get(title="From the template")
    assert response.status_code == 302 and new.pk != room.pk
    agents = {a.pk: a for a in new.agents.all()}
    ordered = [agents[i] for i in new.queue["order"]]
    assert [(a.name, a.talkativeness, a.candidate) for a in ordered] == [
        ("Alice", 100, True),
        ("Bob", 30, False),
        ("Charlie", 0, True),
    ]
    assert (new.turn_order, new.selector_repeat, new.response_delay, new.memory) == ("pick", True, 7, "stop")
    assert new.queue.get("picked", []) == [] and not new.messages.filter(kind="user").exists()
    # Someone else cannot start a room from it.
    other = get_user_model().objects.create_user("otto", password="pw")
    client.force_login(other)
    response = client.post("/rooms/", {"title": "Stolen", "visibility": "private", "template": template.pk})
    assert "Select a valid choice" in response.content.decode() and not Room.objects.filter(title="Stolen").exists()


def test_the_admin_opens_a_new_room_from_a_template(room, client):
    template = services.save_template(room, "Admin's pick")
    staff = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(staff)
    response = client.post("/admin/rooms/roomtemplate/", {"action": "start_room", "_selected_action": [template.pk]})
    new = Room.objects.get(owner=staff)
    assert response.status_code == 302 and response["Location"] == f"/rooms/{new.pk}/"
    assert list(new.agents.values_list("name", flat=True)) == ["Alice", "Bob", "Charlie"]
    assert new.title == "Admin's pick" and new.visibility == "private"


class Dropped(RoomObserver):
    def __init__(self) -> None:
        self.names: list[str] = []

    def dropped(self, room, agent) -> None:
        self.names.append(agent.name)


def remove_while_answering(room, llm_server, run):
    """Run the room's work; once the first request is in flight, the owner removes the agent it asks."""

    async def go():
        task = asyncio.create_task(run)
        while not llm_server.requests:
            await asyncio.sleep(0.02)
        name = agent_of(llm_server.requests[0])
        stored = await sync_to_async(Room.objects.get)(pk=room.pk)
        agent = await sync_to_async(stored.agents.get)(name=name)
        await sync_to_async(services.remove_agent)(stored, agent)
        await asyncio.wait_for(task, 30)
        return name

    return asyncio.run(go())


def test_an_agent_removed_while_it_answers_in_auto_mode_is_dropped_and_the_others_go_on(room, llm_server):
    llm_server.configure(latency=0.6)
    room.max_messages = 2
    room.save()
    services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    observer = Dropped()
    gone = remove_while_answering(room, llm_server, auto_loop(room.pk, observer))
    assert gone == "Alice"
    assert observer.names == ["Alice"]
    assert list(room.messages.filter(kind="agent").values_list("author", flat=True)) == ["Bob", "Charlie"]
    assert room.messages.filter(content="[Alice | chat] left the conversation").exists()
    assert not room.messages.filter(author="Alice").exists()


def test_an_agent_removed_during_a_manual_round_leaves_no_pending_answer(room, llm_server):
    llm_server.configure(latency=0.6)
    services.post_message(room, "olive", "Hello all")
    observer = Dropped()
    gone = remove_while_answering(room, llm_server, manual_round(room.pk, observer))
    assert observer.names == [gone]
    pending = set(room.messages.filter(kind="pending").values_list("author", flat=True))
    assert pending == {"Alice", "Bob", "Charlie"} - {gone}


def test_changing_the_agents_keeps_the_turn_the_engine_took_meanwhile(room):
    # The page's request loaded the room; the engine then moved the queue on past a turn.
    loaded = Room.objects.get(pk=room.pk)
    moved = q.advance(q.Queue.from_json(room.queue), [room.queue["order"][0]], [])
    Room.objects.filter(pk=room.pk).update(queue=moved.to_json())
    import_personas([("Dora.yaml", PERSONA.format(n="Dora"))])
    dora, _ = services.add_agent(loaded, Persona.objects.get(name="Dora"))
    bob = loaded.agents.get(name="Bob")
    bob_id = bob.pk
    services.remove_agent(loaded, bob)
    room.refresh_from_db()
    assert moved.cursor == 1
    assert room.queue == q.remove_agent(q.add_agent(moved, dora.pk), bob_id).to_json()


def test_an_answer_that_was_only_another_s_lines_is_a_skip_and_the_next_goes_on(room, llm_server):
    room.max_messages = 2
    room.save()
    # Alice's first answer is all Bob's lines: cut there, nothing of hers is left.
    llm_server.configure(rules=[{"reply": "Bob: Yes, I think olive is right.\nAlice: Thanks.", "times": 1}])
    go = services.post_message(room, "olive", "Go")
    services.set_mode(room, Room.Mode.AUTO)
    asyncio.run(auto_loop(room.pk))
    # The turns: the agents' messages and skips (the room's own lines, "Auto mode started", have no author).
    after = list(
        room.messages.filter(pk__gt=go.pk).exclude(author="").values_list("kind", "author", "content", "active")
    )
    assert after[0] == (
        "system",
        "Alice",
        "[Alice | chat] skipped their turn: their answer was only other participants' lines (it began with Bob's), "
        "so nothing was kept",
        False,
    )
    agents = [(author, active) for kind, author, content, active in after if kind == "agent"]
    assert agents == [("Bob", True), ("Charlie", True)]
    assert all(content.strip() for kind, _, content, _ in after if kind == "agent")
    # Bob, next, answered a conversation with no empty turn of Alice's in it.
    bob = next(r for r in llm_server.requests if agent_of(r) == "Bob")
    assert all(m["content"].strip() for m in bob.messages)
    assert [agent_of(r) for r in llm_server.requests] == ["Alice", "Bob", "Charlie"]


def test_in_a_manual_round_an_answer_of_only_another_s_lines_leaves_no_empty_card(room, llm_server):
    llm_server.configure(rules=[{"reply": "Bob: I would say no."}])
    asked = services.post_message(room, "olive", "Agree?")
    asyncio.run(manual_round(room.pk))
    pending = list(room.messages.filter(kind="pending").values_list("author", "content"))
    assert pending == [("Bob", "Bob: I would say no.")]  # his own name is his to write
    skips = room.messages.filter(pk__gt=asked.pk, kind="system", active=False).order_by("author")
    assert [(m.author, m.content) for m in skips] == [
        (
            name,
            f"[{name} | chat] skipped their turn: their answer was only other participants' lines (it began "
            "with Bob's), so nothing was kept",
        )
        for name in ("Alice", "Charlie")
    ]
