"""A debate's options in its exports and over the API are those it runs at (`Format.effective_options`): its
format's defaults with those given, as its header event holds them, though only those given are stored (the
`debate` command stores no others), so debates stored before read the same."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from debates import format_cards, transcripts
from debates.models import Debate
from debates.setup import SeatChoice, create_debate
from personas.models import Persona
from tests.api.test_page_actions import Api
from tests.debates.test_command import SAMPLES

pytestmark = pytest.mark.django_db


@pytest.fixture
def debate():
    call_command("import_personas", str(SAMPLES), stdout=StringIO())
    call_command("import_formats", "cards/", verbosity=0)
    names = {"aff": "Ada Sterling", "neg": "Marcus Vale"}
    seats = {key: SeatChoice(persona=Persona.objects.get(name=name)) for key, name in names.items()}
    card = format_cards.find_card(None, "lincoln-douglas")
    return create_debate(
        format_name="lincoln-douglas", topic="Cars?", seats=seats, options={"questions": 5}, card_source=card.yaml
    )


def test_the_exports_give_the_options_it_runs_at(debate, people):
    assert debate.options == {"questions": 5}  # as given
    runs_at = {"questions": 5, "word_limit": 400}
    assert transcripts.as_dict(debate)["options"] == runs_at
    out = StringIO()
    call_command("export_transcript", str(debate.pk), "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["options"] == runs_at
    Debate.objects.filter(pk=debate.pk).update(owner=people["owner"])
    assert Api(people["owner"]).get(f"/debates/{debate.pk}").json()["options"] == runs_at
