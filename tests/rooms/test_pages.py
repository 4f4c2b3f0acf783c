"""The room page as its owner and as anyone else gets it, and what its hints promise."""

import asyncio
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from personas.models import Persona, import_personas
from rooms import services
from rooms.engine import manual_round
from rooms.models import Room

pytestmark = pytest.mark.django_db(transaction=True)

PERSONA = "name: {n}\nrole: chat\npersonality: You are {n}.\n"
OWNER_CONTROLS = ("hx-post", "Remove ", "speak next", "Move ", 'name="keep"', "active</label>", "Retry")


@pytest.fixture
def room(llm_server):
    owner = get_user_model().objects.create_user("admin", password="pw")
    import_personas([(f"{n}.yaml", PERSONA.format(n=n)) for n in ("Marcus", "Ada", "Mira")])
    room = Room.objects.create(title="Chat", owner=owner, visibility="unlisted", turn_order="pick")
    for name in ("Marcus", "Ada", "Mira"):
        services.add_agent(room, Persona.objects.get(name=name))
    room.refresh_from_db()
    return room


def test_a_stranger_on_the_share_page_gets_the_owner_s_name_and_no_owner_control(room):
    services.post_message(room, "admin", "Hello all")
    asyncio.run(manual_round(room.pk))
    services.submit_pending(room, {room.messages.filter(kind="pending").first().pk})
    page = Client().get(f"/r/{room.share_token}/").content.decode()
    main = page[page.index('<div id="room"') :]
    assert "(you)" not in main
    assert re.search(r'class="who">admin</span>', main)
    for control in OWNER_CONTROLS:
        assert control not in main, control
    assert main.count("<button") == 0  # the export links and the status line are all a stranger gets
    labels = re.findall(r'<span class="viewer-only">([^<]*)</span>', main)
    assert labels == ["Marcus | chat", "Ada | chat", "Mira | chat"]
    # The owner's own page has the controls, and says which message is theirs.
    owner = Client()
    owner.force_login(room.owner)
    mine = owner.get(f"/rooms/{room.pk}/").content.decode()
    assert '<span class="owner-only">(you)</span>' in mine and 'aria-label="Remove Marcus"' in mine
    assert 'class="viewer-only"' not in mine


def test_a_mention_in_manual_mode_is_answered_by_every_agent_and_the_hint_says_so(room, llm_server):
    services.post_message(room, "admin", "@mar what do you think?")
    asyncio.run(manual_round(room.pk))
    asked = sorted(r.system.split("\n\n")[0] for r in llm_server.requests)
    assert asked == ["You are Ada.", "You are Marcus.", "You are Mira."]  # the spec's manual mode: every agent
    owner = Client()
    owner.force_login(room.owner)
    page = owner.get(f"/rooms/{room.pk}/").content.decode()
    assert "asks someone directly" not in page
    assert (
        "In manual mode every agent answers, @mentioned or not: <code>@Name</code> puts that agent first when auto "
        "mode runs. To ask only some agents, whisper to them." in page
    )
    assert 'aria-describedby="say-hint say-off"' in page


def test_a_refused_new_room_sums_up_every_problem_linked_to_its_field():
    owner = get_user_model().objects.create_user("olive", password="pw")
    client = Client()
    client.force_login(owner)
    response = client.post("/rooms/", {"title": "", "visibility": "nowhere"})
    assert response.status_code == 422
    page = response.content.decode()
    summary = page.split('<div class="error-summary"')[1].split("</div>")[0]
    assert 'role="alert" tabindex="-1" autofocus aria-labelledby="error-summary-title"' in summary
    assert '<a href="#id_title">Title: This field is required.</a>' in summary
    assert '<a href="#id_personas_0">Personas: Choose at least one persona, or a template.</a>' in summary
    assert '<a href="#id_visibility">Visibility: Select a valid choice. nowhere is not one of the' in summary


def test_the_mode_panel_says_what_auto_mode_does_not_that_it_is_on(room):
    client = Client()
    client.force_login(room.owner)
    assert room.mode != "auto"
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    mode = page[page.index("<h3>Mode</h3>") :].split("</section>", 1)[0]
    assert "Auto mode on" not in mode
    assert 'aria-pressed="false">Auto mode <span class="toggle-state" aria-hidden="true">off</span>' in mode
    assert "In auto mode the agents take turns, and the input is off until you switch auto mode off" in mode
