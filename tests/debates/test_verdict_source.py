"""A verdict says where it came from: a judge whose verdict JSON stayed invalid after the gateway's attempts
gives a fallback outcome, and the debate page, the share page, the exports and the API say so, with its reason.
End to end: the `debate` command against the test server, which answers the verdict's JSON call malformed."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from api.tokens import create_token
from debates import transcripts
from debates.models import Debate

pytestmark = pytest.mark.django_db(transaction=True)

SAMPLES = Path(__file__).resolve().parents[2] / "personas" / "samples"
REASON = (
    "The judge gave no valid verdict after three attempts, so the winner is the one it confirmed and the scores are "
    "its running scores."
)


def duel(llm_server, broken: bool) -> Debate:
    get_user_model().objects.create_user("admin", password="pw-admin-123")  # the command's default owner
    call_command("import_personas", str(SAMPLES), stdout=StringIO())
    if broken:  # every verdict JSON call (the one asking for "winner") comes back as malformed JSON
        llm_server.configure(rules=[{"match": '"winner"', "fault": "malformed_json"}])
    args = ["duel", "--topic", "Should cities ban private cars?", "--turns", "2", "--visibility", "unlisted"]
    args += ["--a", "Ada Sterling", "--b", "Marcus Vale", "--judge", "Judge Ines Okafor"]
    call_command("debate", *args, stdout=StringIO())
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED
    return debate


def test_a_fallback_verdict_is_marked_on_every_face_with_its_reason(llm_server):
    debate = duel(llm_server, broken=True)
    owner = Client()
    owner.force_login(debate.owner)
    page = owner.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "Not the judge's own verdict:</strong> " + REASON in page
    shared = Client().get(reverse("debate_share", args=[debate.share_token])).content.decode()
    assert "Not the judge's own verdict:</strong> " + REASON in shared
    assert transcripts.as_dict(debate)["verdict"]["fallback"] == REASON
    assert f"**Not the judge's own verdict:** {REASON}" in transcripts.as_markdown(debate)
    _, token = create_token(debate.owner, "probe", read_only=True)
    answer = Client().get(f"/api/v1/debates/{debate.pk}", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert answer.status_code == 200
    assert json.loads(answer.content)["verdict"]["fallback"] == REASON


def test_a_judges_own_verdict_carries_no_fallback(llm_server):
    debate = duel(llm_server, broken=False)
    owner = Client()
    owner.force_login(debate.owner)
    assert "Not the judge" not in owner.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert transcripts.as_dict(debate)["verdict"]["fallback"] is None
