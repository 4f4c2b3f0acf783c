"""A page that (re)connects mid-step: its socket's catch-up brings the card being written with its text so far,
with offsets the pushes after it continue from; and a socket that missed a push is told to resync."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from chaoslm import live
from config.routing import websocket_urlpatterns
from debates.broadcast import DebateBroadcaster
from debates.formats import Step
from debates.models import Debate, Event, Seat
from tests.debates.test_thinking_privacy import INSIDERS, VIEWERS, addresses, make_duel, viewer

pytestmark = pytest.mark.django_db(transaction=True)


async def connect(socket, user, since=0):
    application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
    communicator = WebsocketCommunicator(application, f"{socket}?since={since}")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    return communicator, await communicator.receive_from()


@pytest.mark.parametrize("who", list(VIEWERS))
def test_a_page_opening_mid_step_shows_the_text_written_so_far_and_continues_from_it(people, who):
    visibility, via_share = VIEWERS[who]
    debate = make_duel(people["owner"], visibility, show_thinking=True)
    _, socket, _ = addresses(debate, via_share)
    user = viewer(people, who)
    latest = debate.events.order_by("-pk").first().pk

    async def go():
        watching, _ = await connect(socket, user, latest)  # a page is open: the broadcaster draws
        broadcaster = DebateBroadcaster(debate.pk)
        fresh = await sync_to_async(Debate.objects.get)(pk=debate.pk)
        await broadcaster.debate_changed(fresh)
        think = Step(ordinal=7, kind="THINK", step="think", seat="b", visibility="private", messages=({},))
        turn = Step(ordinal=8, kind="TURN", step="respond", seat="b", messages=({},))
        broadcaster.step_started(fresh, think)
        broadcaster.step_started(fresh, turn)
        broadcaster.delta(fresh, think, "STREAMED-SECRET")
        broadcaster.delta(fresh, turn, "Cars must <stay>")
        await broadcaster.drain()
        late, mid_step = await connect(socket, user, latest)
        broadcaster.delta(fresh, turn, " home.")
        await broadcaster.drain()
        following = await late.receive_from()
        seat = await sync_to_async(Seat.objects.get)(debate=debate, key="b")
        event = await sync_to_async(Event.objects.create)(
            debate=debate, ordinal=8, seat=seat, kind="TURN", step="respond", content="Cars must stay home."
        )
        await broadcaster.event_saved(fresh, event)
        await broadcaster.drain()
        after, after_step = await connect(socket, user, latest)
        for communicator in (watching, late, after):
            await communicator.disconnect()
        return mid_step, following, after_step

    mid_step, following, after_step = asyncio.run(go())

    # The card being written, then its text whole from offset 0, escaped; the next push goes on from there.
    assert '<article id="ev-8" class="card writing"' in mid_step
    assert '<span data-into="ev-8-text" data-gen="0" data-at="0" data-reset>Cars must &lt;stay&gt;</span>' in mid_step
    assert '<span data-into="ev-8-text" data-gen="0" data-at="16"> home.</span>' in following
    # Private text streamed so far reaches the same pages as its tokens: the owner's and staff's.
    assert '<article id="ev-7" class="card writing private"' in mid_step
    assert ("STREAMED-SECRET" in mid_step) is (who in INSIDERS)
    # Once saved, the card is no longer being written: a page opening then gets the saved card only.
    assert 'id="ev-8"' in after_step and "Cars must stay home." in after_step
    assert "card writing" not in after_step.split('id="ev-8"')[1].split("</article>")[0]
    assert 'data-into="ev-8-text"' not in after_step


def test_a_page_opening_after_a_run_stopped_mid_step_gets_no_card_being_written(people):
    debate = make_duel(people["owner"], "public", show_thinking=True)
    _, socket, _ = addresses(debate, via_share=False)

    async def go():
        watching, _ = await connect(socket, people["owner"])
        broadcaster = DebateBroadcaster(debate.pk)
        fresh = await sync_to_async(Debate.objects.get)(pk=debate.pk)
        await broadcaster.debate_changed(fresh)
        broadcaster.step_started(fresh, Step(ordinal=8, kind="TURN", step="respond", seat="b", messages=({},)))
        broadcaster.delta(fresh, Step(ordinal=8, kind="TURN", step="respond", seat="b", messages=({},)), "Half a")
        await broadcaster.drain()
        # The worker running it dies: nothing ends the card, but the debate is no longer running.
        await sync_to_async(Debate.objects.filter(pk=debate.pk).update)(status=Debate.Status.ERROR)
        later, catch_up = await connect(socket, people["owner"])
        for communicator in (watching, later):
            await communicator.disconnect()
        return catch_up

    assert "Half a" not in asyncio.run(go())


def test_a_socket_that_missed_a_push_is_closed_for_its_page_to_catch_up(people):
    debate = make_duel(people["owner"], "public", show_thinking=True)
    _, socket, _ = addresses(debate, via_share=False)
    group = live.debate_group(debate.pk)

    async def go():
        communicator, _ = await connect(socket, people["owner"])
        layer = get_channel_layer()
        for seq in (1, 2, 4):  # the layer lost the third push
            await layer.group_send(group, {"type": live.PUSH_TYPE, "html": f"<p>{seq}</p>", "source": "s", "seq": seq})
        received = [await communicator.receive_output(1) for _ in range(3)]
        await communicator.wait()
        return received

    first, second, closed = asyncio.run(go())
    assert [first["text"], second["text"]] == ["<p>1</p>", "<p>2</p>"]
    assert closed == {"type": "websocket.close", "code": 1013}
