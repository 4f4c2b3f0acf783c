"""The sweep, not a page view, resumes a room left in auto mode that no process holds (rooms/work.py)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from chaoslm import runner
from rooms import work
from rooms.models import Room

pytestmark = pytest.mark.django_db(transaction=True)


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
