"""What `POST /debates` takes beside its seats and options, as the new-debate form takes it: the material beyond the
topic, at the form's bound, and the audience poll."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from api.tokens import create_token
from debates.models import Debate
from personas.models import Persona
from tests.debates.test_export_labels import LABELS, lincoln_douglas

# The debates are made, not run: the runner is handed a debate as its transaction commits, and a test's never does.
pytestmark = pytest.mark.django_db


@pytest.fixture
def start(client, people):
    call_command("import_personas", "personas/samples/", verbosity=0)
    debaters = list(Persona.objects.filter(role="debater").values_list("pk", flat=True))[:2]
    _, secret = create_token(people["owner"], "starts", read_only=False)

    def post(**fields):
        body = {"topic": "Which is older?", "seats": {"a": debaters[0], "b": debaters[1]}, **fields}
        return client.post(
            "/api/v1/debates", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {secret}"
        )

    post.get = lambda path: client.get(f"/api/v1{path}", HTTP_AUTHORIZATION=f"Bearer {secret}")
    return post


MATERIAL = "Question: which is older?\nA. The pyramids\nB. Oxford University"


def test_a_debate_carries_its_material_and_returns_it(start):
    made = start(material=MATERIAL)
    assert made.status_code == 201, made.content
    assert made.json()["material"] == MATERIAL
    assert Debate.objects.get().material == MATERIAL
    assert start.get(f"/debates/{made.json()['id']}").json()["material"] == MATERIAL
    assert start.get(f"/debates/{made.json()['id']}/export/json").json()["material"] == MATERIAL


def test_material_past_the_bound_is_refused_with_the_bound(start):
    refused = start(material="x" * 50_001)
    assert refused.status_code == 422 and not Debate.objects.exists()
    assert refused.json()["errors"] == [{"field": "material", "message": "String should have at most 50000 characters"}]
    schema = start.get("/openapi.json").json()["components"]["schemas"]["DebateIn"]["properties"]["material"]
    assert schema["maxLength"] == 50_000


def test_the_events_carry_their_cards_labels(start, people):
    debate = lincoln_douglas(people["owner"])
    events = start.get(f"/debates/{debate.pk}").json()["events"]
    assert [(e["step"], e["label"]) for e in events] == LABELS


def test_a_debate_made_over_the_api_has_the_forms_audience_poll_and_hold(start):
    made = start(visibility="unlisted", hold=5)
    assert made.status_code == 201, made.content
    assert made.json()["audience_poll"] is True and made.json()["starts_at"] is not None
    debate = Debate.objects.get()
    assert debate.audience_poll and debate.held()
    poll = start.get(f"/debates/{debate.pk}/poll")
    assert poll.status_code == 200, poll.content
    assert poll.json()["kind"] == "oxford" and poll.json()["open_phase"] == "before"
    assert [o["key"] for o in poll.json()["options"]] == ["a", "b", "undecided"]
    shared = start.get(f"/shared/debates/{debate.share_token}")
    assert shared.status_code == 200 and shared.json()["audience_poll"] is True


def test_a_debate_made_over_the_api_may_have_no_poll_and_no_hold(start):
    made = start(visibility="unlisted", audience_poll=False)
    assert made.status_code == 201, made.content
    assert made.json()["audience_poll"] is False and made.json()["starts_at"] is None
    assert start.get(f"/debates/{made.json()['id']}/poll").status_code == 404


def test_a_hold_the_form_does_not_offer_is_refused_as_the_form_refuses_it(start):
    refused = start(hold=3)
    assert refused.status_code == 422 and not Debate.objects.exists()
    assert refused.json()["errors"] == [
        {"field": "hold", "message": "Select a valid choice. 3 is not one of the available choices."}
    ]
