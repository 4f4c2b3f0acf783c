"""A room's auto mode is refused while its owner's monthly budget is spent, with the reason, and the room stays
in manual mode; a room's page shows what its calls cost."""

from decimal import Decimal

import pytest
from django.urls import reverse

from personas.models import Budget
from rooms.models import Room

pytestmark = pytest.mark.django_db


def test_auto_mode_is_refused_while_the_budget_is_spent(client, room, owner):
    Budget.objects.create(user=owner, monthly=Decimal("0"))
    reply = client.post(reverse("room_mode", args=[room.pk]), HTTP_HX_REQUEST="true")
    assert reply.status_code == 402
    assert "Your monthly budget of $0 is spent" in reply.content.decode()
    room.refresh_from_db()
    assert room.mode == Room.Mode.MANUAL


def test_the_room_page_shows_its_cost(client, room):
    # The test server is on this machine: no price is known for its model, and the page says so.
    room.messages.create(kind="agent", author="Alice", content="Hi.", tokens_in=40, tokens_out=2, data={"model": "m"})
    page = client.get(reverse("room_detail", args=[room.pk])).content.decode()
    assert '<strong class="cost">unknown price</strong>' in page
    assert 'Alice</span> <span class="muted">(m)</span>: unknown price, 40 in, 2 out' in page
