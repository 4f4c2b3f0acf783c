"""A logged-in owner's room of three chat agents. A module that needs another room, or its owner as a logged-in
client, defines its own `room` or `owner`, which takes the place of these there (test_rooms.py, test_pages.py,
test_exports.py, test_bad_requests.py)."""

import pytest
from django.contrib.auth import get_user_model

from personas.models import Persona, import_personas
from rooms import services

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
