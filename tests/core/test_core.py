"""The core layer: stored event cards, the runner, the live outbox."""

import asyncio
import threading

import pytest
from django.contrib.auth import get_user_model
from django.template.loader import render_to_string
from django.urls import reverse

from chaoslm import runner
from chaoslm.runner import inline
from debates.event_cards import card_html
from debates.models import Debate, Event, Seat

pytestmark = pytest.mark.django_db(transaction=True)


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


def test_a_cancel_that_waits_returns_only_once_the_run_has_stopped():
    """A delete cancels the run and waits for it, so nothing the run does (its last model call, its last write)
    comes after the delete; a plain cancel returns at once, before the run's loop has got to it."""
    started, stopped = threading.Event(), []

    async def run(object_id: int) -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.3)  # what a run does on its way out takes time on the loop
            stopped.append(object_id)

    runner.register("test-stop", run, task=None)
    inline.submit("test-stop", 1)
    assert started.wait(5)
    runner.cancel("test-stop", 1)
    assert stopped == []
    inline.wait_idle()
    started.clear()
    inline.submit("test-stop", 2)
    assert started.wait(5)
    runner.cancel("test-stop", 2, wait=True)
    assert stopped == [1, 2]


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


def test_favicon_ico_is_the_pages_icon_not_a_404(client):
    reply = client.get("/favicon.ico")
    assert reply.status_code == 301 and reply["Location"] == "/static/favicon.svg"
    page = client.get("/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
