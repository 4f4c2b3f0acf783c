"""An owner changes who may see a debate, a room or a tournament: the pages of those who may no longer see
it stop being live at once (chaoslm.sharing.set_visibility), through the real consumers."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.urls import reverse

from config.routing import websocket_urlpatterns
from rooms.models import Room
from tests.security.test_access import make_debate
from tests.tournaments.test_web import make_tournament

pytestmark = pytest.mark.django_db(transaction=True)

KINDS = ["debate", "room", "tournament"]
# (own address, share link) of each kind's websocket.
SOCKETS = {
    "debate": ("/ws/debates/{pk}/", "/ws/share/{token}/"),
    "room": ("/ws/rooms/{pk}/", "/ws/room-share/{token}/"),
    "tournament": ("/ws/tournaments/{pk}/", "/ws/tournament-share/{token}/"),
}


def make(kind, owner, visibility):
    if kind == "debate":
        return make_debate(owner, visibility)
    if kind == "room":
        return Room.objects.create(title="Chat", owner=owner, visibility=visibility)
    return make_tournament(owner, visibility)


def logged_in(user):
    client = Client()
    client.force_login(user)
    return client


async def opened(kind, path, user=None):
    """A socket, past what it is sent on joining (a debate's or a room's catch-up, a tournament's live parts)."""
    communicator = WebsocketCommunicator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)), path)
    if user is not None:
        communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected, path
    await communicator.receive_from()
    return communicator


@pytest.mark.parametrize("kind", KINDS)
def test_sockets_close_for_whom_may_no_longer_see_it(people, kind):
    thing = make(kind, people["owner"], "public")
    own, shared = (p.format(pk=thing.pk, token=thing.share_token) for p in SOCKETS[kind])
    owner = logged_in(people["owner"])

    async def run():
        sockets = {
            "share link": await opened(kind, shared),
            "other at its address": await opened(kind, own, people["other"]),
            "owner": await opened(kind, own, people["owner"]),
            "staff": await opened(kind, own, people["staff"]),
        }
        closed = {}
        # The view runs in a thread whose pushes land on this loop, as the server's do.
        for value in ("unlisted", "private"):
            await sync_to_async(owner.post)(reverse(f"{kind}_visibility", args=[thing.pk]), {"visibility": value})
            for name, communicator in list(sockets.items()):
                if not await communicator.receive_nothing(timeout=0.2):
                    closed[name] = (value, await communicator.receive_output())
                    del sockets[name]
        for communicator in sockets.values():
            await communicator.disconnect()
        return closed, sorted(sockets)

    closed, still_open = asyncio.run(run())
    close = {"type": "websocket.close", "code": 4403}
    # Unlisted: a viewer who saw it because it was public loses it, and so does the share link, which every
    # viewer could copy while it was public (it is replaced). The owner's and staff's pages stay live throughout.
    assert closed == {"other at its address": ("unlisted", close), "share link": ("unlisted", close)}
    assert still_open == ["owner", "staff"]


@pytest.mark.parametrize("kind", KINDS)
def test_making_it_public_again_closes_nothing_and_the_share_link_works_again(people, kind):
    thing = make(kind, people["owner"], "private")
    own, shared = (p.format(pk=thing.pk, token=thing.share_token) for p in SOCKETS[kind])
    owner = logged_in(people["owner"])

    async def run():
        mine = await opened(kind, own, people["owner"])
        await sync_to_async(owner.post)(reverse(f"{kind}_visibility", args=[thing.pk]), {"visibility": "public"})
        quiet = await mine.receive_nothing(timeout=0.2)
        theirs = await opened(kind, shared)
        await mine.disconnect()
        await theirs.disconnect()
        return quiet

    assert asyncio.run(run())


@pytest.mark.parametrize("kind", KINDS)
def test_only_the_owner_changes_it_and_only_to_a_known_visibility(people, kind):
    thing = make(kind, people["owner"], "public")
    url = reverse(f"{kind}_visibility", args=[thing.pk])
    assert Client().post(url, {"visibility": "private"}).status_code == 302  # to the login page
    assert logged_in(people["other"]).post(url, {"visibility": "private"}).status_code == 403
    assert logged_in(people["owner"]).get(url).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(people["owner"])
    assert strict.post(url, {"visibility": "private"}).status_code == 403
    response = logged_in(people["owner"]).post(url, {"visibility": "secret"})
    assert (response.status_code, response.content.decode()) == (400, "Unknown visibility.")
    thing.refresh_from_db()
    assert thing.visibility == "public"

    response = logged_in(people["owner"]).post(url, {"visibility": "unlisted"}, follow=True)
    assert f"This {kind} is now unlisted (anyone with the link)." in response.content.decode()
    assert 'name="visibility"' in response.content.decode()  # the picker, on the owner's page
    thing.refresh_from_db()
    assert thing.visibility == "unlisted"


def test_a_tournaments_debates_follow_its_visibility_and_stay_off_the_home_page(people):
    """A match is seen where its tournament is; the home page lists debates, not a tournament's hundreds."""
    from debates.models import Debate

    tournament = make_tournament(people["owner"], "public")
    duel = make_debate(people["owner"], "public")
    Debate.objects.filter(pk=duel.pk).update(topic="A match of the league", in_batch=True)
    match = tournament.matches.first()
    match.debate = duel
    match.save()
    stranger, owner = Client(), logged_in(people["owner"])
    page = reverse("debate_detail", args=[duel.pk])
    assert stranger.get(page).status_code == 200
    assert "A match of the league" not in stranger.get(reverse("home")).content.decode()
    assert "A match of the league" not in owner.get(reverse("home")).content.decode()

    owner.post(reverse("tournament_visibility", args=[tournament.pk]), {"visibility": "private"})
    duel.refresh_from_db()
    assert duel.visibility == "private"
    assert stranger.get(page).status_code == 404
    assert owner.get(page).status_code == 200
