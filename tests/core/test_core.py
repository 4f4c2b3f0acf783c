"""The core layer: stored event cards, the rooms' context meter and broadcaster, the runner, the rooms sweep."""

import asyncio
import threading

import pytest
from django.contrib.auth import get_user_model
from django.template.loader import render_to_string
from django.urls import reverse

from chaoslm import runner
from chaoslm.llm import estimate_tokens
from chaoslm.personas.models import Persona, import_personas
from chaoslm.runner import inline
from debates.cards import card_html
from debates.models import Debate, Event, Seat
from rooms import services, work
from rooms.broadcast import RoomBroadcaster
from rooms.context import ContextMeter, history
from rooms.models import Room, RoomMessage
from rooms.table import load_room

pytestmark = pytest.mark.django_db(transaction=True)

PERSONA = "name: {n}\nrole: chat\npersonality: You are {n}.\n"


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    return user


def test_a_saved_card_is_stored_escaped_and_shown_as_rendered(client, owner):
    debate = Debate.objects.create(topic="Tea?", format="duel", owner=owner)
    seat = Seat.objects.create(debate=debate, key="a", role="debater", side="for", name="Ada <b>")
    # The id slot's text in a model's reply stays as written: only the card's own attribute is filled in.
    event = Event.objects.create(
        debate=debate, ordinal=3, seat=seat, kind="TURN", content="<script>x()</script> {event-id}"
    )
    live = render_to_string("partials/event_card.html", {"event": event, "seat": seat, "event_id": event.pk})
    assert card_html(Event.objects.get(pk=event.pk)) == live
    assert "<script>" not in event.html and "Ada &lt;b&gt;" in event.html
    assert f'data-event-id="{event.pk}"' in live and "{event-id}</p>" in live
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert live in page


def test_an_error_replaced_in_place_gets_a_new_card(owner):
    debate = Debate.objects.create(topic="Tea?", format="duel", owner=owner)
    event = Event.objects.create(debate=debate, ordinal=1, kind="ERROR", content="first failure")
    Event.objects.update_or_create(debate=debate, ordinal=1, defaults={"kind": "ERROR", "content": "second failure"})
    event.refresh_from_db()
    assert "second failure" in card_html(event) and "first failure" not in card_html(event)


@pytest.fixture
def room(llm_server, owner):
    import_personas([(f"{n}.yaml", PERSONA.format(n=n)) for n in ("Alice", "Bob", "Charlie")])
    room = services.create_room(owner, "Chat", "private", Persona.objects.filter(name__in=["Alice", "Bob", "Charlie"]))
    room.refresh_from_db()
    return room


def _say(room, agent, text, active=True):
    return RoomMessage.objects.create(
        room=room,
        kind="agent" if agent else "user",
        agent=agent,
        author=agent.name if agent else "olive",
        content=text,
        active=active,
    )


def test_the_context_meter_follows_each_message_as_a_full_count_would(room):
    alice, bob, _ = list(room.agents.all())
    table = load_room(room.pk)
    meter = ContextMeter(table.agents, {a.pk: 1000 for a in table.agents}, [])
    said = [
        _say(room, None, "Hello all, a long first message " * 3),
        _say(room, alice, "Hi"),
        _say(room, bob, "Hello"),
        _say(room, bob, "And more"),
        _say(room, None, "Left out", active=False),
        _say(room, alice, "x" * 37),
    ]
    for message in said:
        meter.add(message)
        for agent in table.agents:
            assert meter.tokens(agent.pk) == estimate_tokens(history(said[: said.index(message) + 1], agent))


def test_the_room_broadcaster_pushes_from_memory(room, django_assert_max_num_queries):
    alice = room.agents.get(name="Alice")
    table = load_room(room.pk)
    broadcaster = RoomBroadcaster(room.pk)
    broadcaster.loaded(table)
    message = _say(room, alice, "Hello")

    async def push() -> str:
        await broadcaster.message_saved(table.room, message)
        await broadcaster.countdown(table.room, 3)
        pushed = "".join(item[1] for item in broadcaster.outbox.items if item[0] == "html")
        assert broadcaster.outbox.sender is not None
        broadcaster.outbox.sender.cancel()
        return pushed

    with django_assert_max_num_queries(0):
        pushed = asyncio.run(push())
    assert 'id="msg-' in pushed and "Alice" in pushed and pushed.count('id="room-status"') == 2
    assert "Auto mode" not in pushed and "agent-label" in pushed


def test_the_room_broadcaster_takes_away_the_card_of_an_answer_dropped_when_its_agent_left(room):
    alice, bob = room.agents.get(name="Alice"), room.agents.get(name="Bob")
    table = load_room(room.pk)
    broadcaster = RoomBroadcaster(room.pk)
    broadcaster.loaded(table)

    async def push() -> list[str]:
        broadcaster.started(table.room, alice)
        broadcaster.started(table.room, bob)
        broadcaster.dropped(table.room, alice)
        pushed = [item[1] for item in broadcaster.outbox.items if item[0] == "html"]
        broadcaster.outbox.sender.cancel()
        return pushed

    pushed = asyncio.run(push())
    assert f'data-remove="think-{alice.pk}"' in pushed[-2]
    assert 'id="room-status"' in pushed[-1]
    writing = pushed[-1].split('class="writing">')[1].split("</span>")[0]
    assert writing == "· Bob is writing"
    assert 'aria-label="Remove Bob"' in pushed[-1] and 'aria-label="Remove Alice"' not in pushed[-1]


def test_a_room_page_view_does_not_start_auto_mode_the_sweep_does(client, room, monkeypatch):
    started = []
    monkeypatch.setattr(runner, "submit", lambda kind, object_id: started.append((kind, object_id)))
    Room.objects.filter(pk=room.pk).update(mode=Room.Mode.AUTO)
    assert client.get(reverse("room_detail", args=[room.pk])).status_code == 200
    assert started == []
    assert work.resume_auto() == [room.pk]
    assert started == [(work.AUTO, room.pk)]


def test_the_sweep_leaves_a_held_room_alone(room, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    monkeypatch.setattr(runner, "submit", lambda kind, object_id: pytest.fail("a held room was started again"))
    Room.objects.filter(pk=room.pk).update(mode=Room.Mode.AUTO, held_until=timezone.now() + timedelta(seconds=30))
    assert work.resume_auto() == []


def test_the_inline_runner_runs_once_more_when_submitted_while_running():
    gate, runs = threading.Event(), []

    async def run(object_id: int) -> None:
        runs.append(object_id)
        await asyncio.to_thread(gate.wait, 5)

    runner.register("test-work", run, task=None)
    inline.submit("test-work", 7)
    inline.submit("test-work", 7)
    inline.submit("test-work", 7)
    gate.set()
    inline.wait_idle()
    inline.wait_idle()
    assert runs == [7, 7]


def test_a_page_shows_cards_stored_without_their_html(client, owner):
    debate = Debate.objects.create(topic="Tea?", format="duel", owner=owner, visibility="public")
    seat = Seat.objects.create(debate=debate, key="a", role="debater", side="for", name="Ada")
    Event.objects.bulk_create([Event(debate=debate, ordinal=1, seat=seat, kind="TURN", content="Bulk *words*")])
    event = Event.objects.get(debate=debate)
    assert event.html == ""
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert f'data-event-id="{event.pk}"' in page and "<em>words</em>" in page


def test_the_outbox_drains_after_a_push_in_flight_and_keeps_the_order(monkeypatch):
    """Over a layer that sends across the network (Redis), a push takes time. Draining while one is in flight
    loses nothing and keeps the order: the last card of a round must reach the page."""
    from channels.layers import InMemoryChannelLayer

    from chaoslm import live

    class NetworkLayer(InMemoryChannelLayer):
        """Channels' layer with a round trip before each delivery: the first slow, the rest fast."""

        delays = [0.2]

        async def group_send(self, group, message):
            await asyncio.sleep(self.delays.pop() if self.delays else 0.01)
            await super().group_send(group, message)

    layer = NetworkLayer()
    monkeypatch.setattr(live, "get_channel_layer", lambda: layer)

    async def scenario() -> str:
        await layer.group_add("g", "spectator")
        outbox = live.Outbox("g", "#messages")
        outbox.html("<p>first</p>")
        await asyncio.sleep(0.05)  # the sender has taken it and is sending
        outbox.html("<p>last</p>")
        await outbox.drain()
        received = []
        while len(received) < 2:
            received.append((await asyncio.wait_for(layer.receive("spectator"), 1))["html"])
        return "".join(received)

    assert asyncio.run(scenario()) == "<p>first</p><p>last</p>"


def test_the_outbox_sends_a_token_at_once_and_merges_what_arrives_during_its_window(monkeypatch):
    """A token after a quiet spell is not held back; tokens arriving while a push's window runs go out
    together in the next push, in order with the HTML around them."""
    from channels.layers import InMemoryChannelLayer

    from chaoslm import live

    layer = InMemoryChannelLayer()
    monkeypatch.setattr(live, "get_channel_layer", lambda: layer)
    # A window far longer than the test's patience: the first push must not wait for it.
    monkeypatch.setattr(live, "TOKEN_BATCH_SECONDS", 0.3)

    async def scenario() -> list[str]:
        await layer.group_add("g", "spectator")
        outbox = live.Outbox("g", "#transcript")
        outbox.tokens("ev-1-text", "Hello")
        first = await asyncio.wait_for(layer.receive("spectator"), 0.2)
        outbox.tokens("ev-1-text", " <world>")
        outbox.html("<p id=status>x</p>")
        outbox.tokens("ev-1-text", "!")
        second = await asyncio.wait_for(layer.receive("spectator"), 2)
        await outbox.drain()
        return [first["html"], second["html"]]

    first, second = asyncio.run(scenario())
    assert first == '<div hx-swap-oob="tokens:#transcript"><span data-into="ev-1-text">Hello</span></div>'
    assert second == (
        '<div hx-swap-oob="tokens:#transcript"><span data-into="ev-1-text"> &lt;world&gt;</span></div>'
        "<p id=status>x</p>"
        '<div hx-swap-oob="tokens:#transcript"><span data-into="ev-1-text">!</span></div>'
    )
