"""A protocol's own word for its outcome: a side's `verdict` ("Not guilty") is what the verdict box, the share
page, both exports and the API call the outcome, with the side beside it, in place of "Winner: Defence ·
Premise rejected"; a side without one keeps "Winner"."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rich.console import Console

from api.tokens import create_token
from debates import transcripts
from debates.formats.card import parse_card
from debates.models import Debate, Seat
from debates.terminal import print_verdict
from tests.debates.formats.test_card_when import TRIAL

pytestmark = pytest.mark.django_db

WORDS = TRIAL.replace(
    "  - {key: pros, label: Prosecution, stance: for}\n  - {key: def, label: Defence, stance: against}\n",
    "  - {key: pros, label: Prosecution, stance: for, verdict: Guilty}\n"
    "  - {key: def, label: Defence, stance: against, verdict: Not guilty}\n",
)


def decided(card: str, winner: str) -> Debate:
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    debate = Debate.objects.create(
        topic="The night of the fire",
        premise="The accused set the fire",
        format="trial-test",
        card_source=card,
        owner=owner,
        status="completed",
        visibility="unlisted",
        winner=winner,
        premise_upheld=winner == "Prosecution",
        announcement="I find for the side named.",
    )
    for i, (key, name) in enumerate([("counsel", "Counsel Ames"), ("witness", "Wren Witness"), ("bench", "Bell")]):
        Seat.objects.create(debate=debate, key=key, role="debater", name=name, order=i)
    return debate


def terminal_box(debate: Debate) -> str:
    """The verdict box `manage.py debate` prints at a debate's end."""
    console = Console(record=True, width=100)
    print_verdict(console, debate)
    return console.export_text()


def test_the_sides_verdict_words_name_the_outcome_on_every_face():
    assert [s.verdict for s in parse_card(WORDS).sides] == ["Guilty", "Not guilty"]
    debate = decided(WORDS, "Defence")
    owner = Client()
    owner.force_login(debate.owner)
    for page in (
        owner.get(reverse("debate_detail", args=[debate.pk])),
        Client().get(reverse("debate_share", args=[debate.share_token])),
    ):
        verdict = page.content.decode().split('id="verdict"')[1].split("</section>")[0]
        assert (
            '<p class="winner">Verdict: <strong>Not guilty</strong> <span class="muted">(Defence)</span></p>' in verdict
        )
        assert "Winner" not in verdict and "Premise rejected" not in verdict
    markdown = transcripts.as_markdown(debate)
    assert "**Verdict:** Not guilty (Defence)" in markdown and "**Premise:** rejected" not in markdown
    assert json.loads(transcripts.as_json(debate))["verdict"]["words"] == "Not guilty"
    box = terminal_box(debate)
    assert "Verdict: Not guilty (Defence)" in box and "Winner" not in box and "Premise" not in box
    _, token = create_token(debate.owner, "probe", read_only=True)
    answer = Client().get(f"/api/v1/debates/{debate.pk}", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert json.loads(answer.content)["verdict"]["words"] == "Not guilty"


def test_a_side_without_words_keeps_winner_and_the_premise():
    debate = decided(TRIAL, "Defence")
    owner = Client()
    owner.force_login(debate.owner)
    verdict = owner.get(reverse("debate_detail", args=[debate.pk])).content.decode().split('id="verdict"')[1]
    assert "Winner: <strong>Defence</strong>" in verdict and "Premise rejected" in verdict
    box = terminal_box(debate)
    assert "Winner: Defence" in box and "Premise REJECTED" in box
    assert json.loads(transcripts.as_json(debate))["verdict"]["words"] == ""
