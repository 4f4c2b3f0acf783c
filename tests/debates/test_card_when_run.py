"""A card's conditional speech through the `debate` command, the engine and the real client against the test
server: the witness is never asked to testify once the objection is sustained, and is once it is overruled; the
page shows what was said, and the card's page shows the condition beside its speech."""

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from debates import format_cards
from debates.models import Debate
from personas.models import import_personas
from tests.debates.formats.test_card_when import TRIAL

pytestmark = pytest.mark.django_db(transaction=True)


def trial(llm_server, ruling: str) -> Debate:
    owner = get_user_model().objects.create_user("admin", password="pw-admin-123")  # the command's default owner
    format_cards.save_card(TRIAL, owner=owner)
    import_personas(
        [
            (f"{key}.yaml", f"name: {name}\nrole: {role}\npersonality: {name} speaks.\n")
            for key, name, role in (
                ("counsel", "Counsel Ames", "debater"),
                ("witness", "Wren Witness", "debater"),
                ("bench", "Judge Bell", "moderator"),
            )
        ]
    )
    answer = lambda choice: json.dumps({"reasoning": "As the rules say.", "answer": choice})  # noqa: E731
    llm_server.configure(
        rules=[
            {"match": "Object to the question", "reply": answer("object")},
            {"match": "Rule on the objection", "reply": answer(ruling)},
        ]
    )
    seats = ["--seat", "counsel=Counsel Ames", "--seat", "witness=Wren Witness", "--seat", "bench=Judge Bell"]
    call_command("debate", "trial-test", "--topic", "The night of the fire", *seats, stdout=StringIO())
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    return debate


def asked(llm_server) -> list[str]:
    return [r.last_user.splitlines()[-1] for r in llm_server.requests]


def test_a_sustained_objection_means_the_witness_never_testifies(llm_server):
    debate = trial(llm_server, "sustained")
    assert [line.split(".")[0] for line in asked(llm_server)] == [
        "Ask the witness one question about The night of the fire",
        "Object to the question, or not",
        "Rule on the objection",
    ]
    assert list(debate.events.filter(kind="TURN").values_list("step", flat=True)) == [
        "question",
        "objection",
        "ruling",
    ]
    owner = Client()
    owner.force_login(debate.owner)
    page = owner.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "Answer: sustained" in page and "testimony" not in page


def test_an_overruled_objection_lets_the_witness_answer(llm_server):
    debate = trial(llm_server, "overruled")
    assert asked(llm_server)[-1] == "Answer the question."
    assert list(debate.events.filter(kind="TURN").values_list("step", flat=True)) == [
        "question",
        "objection",
        "ruling",
        "testimony",
    ]
    owner = Client()
    owner.force_login(debate.owner)
    card_page = owner.get(reverse("format_detail", args=["trial-test"])).content.decode()
    assert '<div class="when"><span class="muted">Given</span> unless the answer to &quot;ruling&quot; is' in card_page
    assert "a debate makes <strong>3 to 4 LLM calls</strong> (fewer when its rounds stop early" in card_page
