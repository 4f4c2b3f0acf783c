"""The sweep, not a page view, resumes a room left in auto mode that no process holds (rooms/work.py)."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from chaoslm import runner
from chaoslm.personas.models import Persona, import_personas
from rooms import services, work
from rooms.models import Room

pytestmark = pytest.mark.django_db(transaction=True)

PERSONA = "name: {n}\nrole: chat\npersonality: You are {n}.\n"


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    return user


@pytest.fixture
def room(llm_server, owner):
    import_personas([(f"{n}.yaml", PERSONA.format(n=n)) for n in ("Alice", "Bob", "Charlie")])
    room = services.create_room(owner, "Chat", "private", Persona.objects.filter(name__in=["Alice", "Bob", "Charlie"]))
    room.refresh_from_db()
    return room


def test_a_room_page_view_does_not_start_auto_mode_the_sweep_does(client, room, monkeypatch):
    started = []
    monkeypatch.setattr(runner, "submit", lambda kind, object_id: started.append((kind, object_id)))
    Room.objects.filter(pk=room.pk).update(mode=Room.Mode.AUTO)
    assert client.get(reverse("room_detail", args=[room.pk])).status_code == 200
    assert started == []
    assert work.resume_auto() == [room.pk]
    assert started == [(work.AUTO, room.pk)]


def test_the_sweep_leaves_a_held_room_alone(room, monkeypatch):
    monkeypatch.setattr(runner, "submit", lambda kind, object_id: pytest.fail("a held room was started again"))
    Room.objects.filter(pk=room.pk).update(mode=Room.Mode.AUTO, held_until=timezone.now() + timedelta(seconds=30))
    assert work.resume_auto() == []
