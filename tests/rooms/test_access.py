"""Rooms follow the debates' visibility and ownership rules, in views and websockets."""

import asyncio

import pytest
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from config.routing import websocket_urlpatterns
from rooms.models import Room, RoomMessage

pytestmark = pytest.mark.django_db(transaction=True)
VISIBILITIES = ["private", "unlisted", "public"]
VIEW = {"anonymous": (404, 404, 200), "other": (404, 404, 200), "owner": (200, 200, 200)}
SHARE = {who: (404, 200, 200) for who in VIEW}
ACT = {"anonymous": (302, 302, 302), "other": (404, 404, 403)}


def client(who, people):
    c = Client()
    if who != "anonymous":
        c.force_login(people[who])
    return c


@pytest.mark.parametrize("who", ["anonymous", "other", "owner"])
@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_room_pages_share_links_and_actions(people, who, visibility):
    room = Room.objects.create(title="Chat", owner=people["owner"], visibility=visibility)
    index = VISIBILITIES.index(visibility)
    c = client(who, people)
    assert c.get(reverse("room_detail", args=[room.pk])).status_code == VIEW[who][index]
    assert c.get(reverse("room_share", args=[room.share_token])).status_code == SHARE[who][index]
    if who != "owner":
        for name in ("room_say", "room_mode", "room_keep", "room_settings", "room_add_agent", "room_turn_order"):
            response = c.post(reverse(name, args=[room.pk]), {"text": "hi"})
            assert response.status_code == ACT[who][index], name
        assert not RoomMessage.objects.filter(room=room).exists()
        room.refresh_from_db()
        assert room.mode == Room.Mode.MANUAL


async def connect(path, user):
    communicator = WebsocketCommunicator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)), path)
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_room_websockets(people, visibility):
    room = Room.objects.create(title="Chat", owner=people["owner"], visibility=visibility)
    index = VISIBILITIES.index(visibility)
    assert asyncio.run(connect(f"/ws/rooms/{room.pk}/", people["owner"]))
    assert asyncio.run(connect(f"/ws/rooms/{room.pk}/", AnonymousUser())) == (index == 2)
    assert asyncio.run(connect(f"/ws/room-share/{room.share_token}/", AnonymousUser())) == (index > 0)
