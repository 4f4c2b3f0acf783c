"""The pages' many-ids fields at their edge: a number past 64 bits among the ids ticked is a form error, not a 500
(Django looks the ids up with one `pk__in` query, which such a number breaks on SQLite)."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

BIG = str(10**30)


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("room_list", {"title": "Big", "personas": [BIG], "order": BIG, "visibility": "private"}),
        ("tournament_new", {"name": "Big", "debaters": [BIG, "1"], "judges": [BIG]}),
    ],
)
def test_an_id_past_64_bits_among_those_ticked_is_a_form_error(client, people, url, data):
    client.force_login(people["owner"])
    reply = client.post(reverse(url), data)
    assert reply.status_code in (200, 400, 422)
    assert f"{BIG}\u201d is not a valid value." in reply.content.decode()  # the field's own message
