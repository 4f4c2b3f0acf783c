"""A room's exports: everything for its owner; for anyone else, and by a share link, only what they may see."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from personas.models import Persona, import_personas
from rooms import services
from rooms.models import Room, RoomMessage

pytestmark = pytest.mark.django_db


@pytest.fixture
def room():
    owner = get_user_model().objects.create_user("olive", password="pw")
    import_personas([(f"{n}.yaml", f"name: {n}\nrole: chat\npersonality: You are {n}.\n") for n in ("Alice", "Bob")])
    room = Room.objects.create(title="Costs", owner=owner, visibility="unlisted")
    for name in ("Alice", "Bob"):
        services.add_agent(room, Persona.objects.get(name=name))
    alice = room.agents.get(name="Alice")
    services.post_message(room, "olive", "Hello all")
    services.post_message(room, "olive", "Alice only: the budget is 5k", to=[alice.pk])
    RoomMessage.objects.create(
        room=room,
        kind="agent",
        agent=alice,
        author="Alice",
        content="Half a thought",
        active=False,
        data={"interrupted": True},
    )
    RoomMessage.objects.create(
        room=room, kind="system", content="[Bob | chat] skipped their turn: nothing to add on pricing", active=False
    )
    return room


def get(client, url):
    response = client.get(url)
    assert response.status_code == 200, url
    return response


def test_the_owner_s_export_has_everything_and_says_what_each_message_was(room):
    owner = Client()
    owner.force_login(room.owner)
    markdown = get(owner, f"/rooms/{room.pk}/export.md").content.decode()
    assert markdown.startswith("# Costs\n\nChat room · turn order: round robin")
    assert "**olive**:\n\nHello all" in markdown
    assert "**olive** (whisper to Alice):\n\nAlice only: the budget is 5k" in markdown
    assert "**Alice** (inactive; interrupted):\n\nHalf a thought" in markdown
    assert "*[Bob | chat] skipped their turn: nothing to add on pricing*" in markdown
    data = json.loads(get(owner, f"/rooms/{room.pk}/export.json").content)
    assert [m["content"] for m in data["messages"] if "whisper_to" in m] == ["Alice only: the budget is 5k"]
    assert data["agents"][0]["system_prompt"].startswith("You are Alice.")
    response = get(owner, f"/rooms/{room.pk}/export.json")
    assert response["Content-Disposition"] == f'attachment; filename="room-{room.pk}.json"'


def test_anyone_else_and_every_share_link_get_what_they_may_see(room):
    owner = Client()
    owner.force_login(room.owner)
    for client, url in [
        (Client(), f"/r/{room.share_token}/export.md"),
        (owner, f"/r/{room.share_token}/export.md"),  # a share link is for passing on, even the owner's
        (Client(), f"/r/{room.share_token}/export.json"),
    ]:
        text = get(client, url).content.decode()
        assert "Hello all" in text and "budget is 5k" not in text and "You are Alice." not in text
    assert Client().get(f"/rooms/{room.pk}/export.md").status_code == 404  # unlisted: only by the link
    room.visibility = "private"
    room.save()
    assert Client().get(f"/r/{room.share_token}/export.md").status_code == 404
    page = owner.get(f"/rooms/{room.pk}/").content.decode()
    assert f'href="/rooms/{room.pk}/export.md"' in page and f'href="/rooms/{room.pk}/export.json"' in page
