"""What a room refuses from a request: whispers to anyone but its agents, numbers `int()` cannot read.

Each refusal is a 4xx with a message and saves nothing; none is a 500, none turns a whisper public.
"""

import html

import pytest
from django.contrib.auth import get_user_model

from personas.models import Persona, import_personas
from rooms import services
from rooms.models import Room

pytestmark = pytest.mark.django_db(transaction=True)

PERSONA = "name: {n}\nrole: chat\npersonality: You are {n}.\n"
# What int() cannot read ('²', '½'), reads though it is no ASCII number ('٣') or reads past any field ('9' * 30).
BAD_NUMBERS = ["²", "½", "٣", "1e3", "", "9" * 30, "-1", "abc"]


@pytest.fixture
def room(llm_server):
    owner = get_user_model().objects.create_user("olive", password="pw")
    import_personas([(f"{n}.yaml", PERSONA.format(n=n)) for n in ("Alice", "Bob", "Charlie")])
    room = Room.objects.create(title="Chat", owner=owner, visibility="public")
    for name in ("Alice", "Bob"):
        services.add_agent(room, Persona.objects.get(name=name))
    return room


@pytest.fixture
def owner(room, client):
    client.force_login(room.owner)
    return client


def refusal(response) -> str:
    return html.unescape(response.content.decode())


def whisper_targets(room):
    """Every kind of `to` that is no agent of `room`: unreadable, zero, negative, huge, empty, another room's
    agent, one removed from this room."""
    other = Room.objects.create(title="Other", owner=room.owner)
    elsewhere, _ = services.add_agent(other, Persona.objects.get(name="Charlie"))
    gone, _ = services.add_agent(room, Persona.objects.get(name="Charlie"))
    services.remove_agent(room, gone)
    return {
        "zero": "0",
        "letters": "abc",
        "negative": "-3",
        "huge": "9" * 30,
        "superscript": "²",
        "empty": "",
        "another room's agent": str(elsewhere.pk),
        "a removed agent": str(gone.pk),
    }


def test_a_whisper_to_anyone_but_this_room_s_agents_is_refused_and_saves_nothing(room, owner):
    alice = room.agents.get(name="Alice")
    for label, target in whisper_targets(room).items():
        said = set(room.messages.filter(kind="user").values_list("pk", flat=True))
        for to in ([target], [str(alice.pk), target]):  # alone, or beside a real agent
            response = owner.post(f"/rooms/{room.pk}/say/", {"text": "Only you, Alice", "to": to})
            assert response.status_code == 422, label
            assert "Whisper only to this room's agents" in refusal(response), label
            assert set(room.messages.filter(kind="user").values_list("pk", flat=True)) == said, label
    # No box ticked: a message for everyone; one agent ticked: a whisper to it.
    assert owner.post(f"/rooms/{room.pk}/say/", {"text": "Hello all"}).status_code == 200
    public = room.messages.get(kind="user", content="Hello all")
    assert public.audience == []


def test_a_whisper_to_an_agent_of_the_room_is_one(room, owner):
    alice = room.agents.get(name="Alice")
    response = owner.post(f"/rooms/{room.pk}/say/", {"text": "Only you, Alice", "to": [str(alice.pk)]})
    assert response.status_code == 200
    assert room.messages.get(kind="user").audience == [alice.pk]


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_a_talkativeness_that_is_no_whole_number_from_0_to_100_is_refused_with_a_message(room, owner, value):
    bob = room.agents.get(name="Bob")
    response = owner.post(f"/rooms/{room.pk}/agent-settings/", {f"talk-{bob.pk}": value})
    assert response.status_code == 422
    shown = value if len(value) <= 20 else value[:20] + "…"
    assert refusal(response) == f"Bob's talkativeness must be a whole number from 0 to 100, not {shown!r}."
    bob.refresh_from_db()
    assert bob.talkativeness == 100


def test_a_talkativeness_in_range_is_saved(room, owner):
    bob = room.agents.get(name="Bob")
    assert owner.post(f"/rooms/{room.pk}/agent-settings/", {f"talk-{bob.pk}": " 40 "}).status_code < 400
    bob.refresh_from_db()
    assert bob.talkativeness == 40


@pytest.mark.parametrize("value", [v for v in BAD_NUMBERS if v])
def test_a_new_room_s_order_that_is_no_list_of_ids_is_refused_and_the_form_keeps_the_ticks(room, owner, value):
    personas = list(Persona.objects.values_list("pk", flat=True))
    form = {"title": "Ordered", "visibility": "private", "personas": personas, "order": f"{personas[1]},{value}"}
    response = owner.post("/rooms/", form)
    assert response.status_code == 422
    assert "The order they were ticked in could not be read" in refusal(response)
    assert not Room.objects.filter(title="Ordered").exists()
    page = response.content.decode()
    assert page.count("checked") >= len(personas)  # the boxes stay ticked


def test_an_empty_order_keeps_the_list_s_order(room, owner):
    personas = list(Persona.objects.order_by("name").values_list("pk", flat=True))
    form = {"title": "Plain", "visibility": "private", "personas": personas, "order": ""}
    assert owner.post("/rooms/", form).status_code == 302
    plain = Room.objects.get(title="Plain")
    assert [a.name for a in plain.agents.order_by("pk")] == ["Alice", "Bob", "Charlie"]
