"""A team the debate ended before is not ranked as if judged: a British Parliamentary debate ended after its first
two speeches, whose judge gives a valid ranking of all four teams (the closing teams first), places the teams that
spoke in the judge's order and the two that never spoke below them, named as not ranked, on the page, the share
page, the Markdown and JSON exports and the API."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rich.console import Console

from api.tokens import create_token
from debates import selectors, transcripts
from debates.models import Debate, Event, Seat
from debates.terminal import print_verdict
from tests.debates.formats.test_card import CARDS, config_for, load, reply
from tests.debates.formats.test_card_equivalence import run

TEAMS = ["Opening Government", "Opening Opposition", "Closing Government", "Closing Opposition"]


def ended_after_two_speeches():
    card = load("british-parliamentary")
    config = config_for(card)
    _, _, records, _ = run(card, config, reply=reply, stop=lambda rs: sum(r.kind == "TURN" for r in rs) >= 2)
    _, _, records, plan = run(card, config_for(card, is_ending=True), records, reply=reply)
    assert plan.finished
    decide = next(r for r in records if r.step == "verdict_json")
    assert decide.data["ranking"] == list(reversed(TEAMS))  # valid: every team once, the closing teams first
    return card, config, records


def test_the_ranking_places_the_teams_that_spoke_and_names_the_others_below_them():
    card, config, records = ended_after_two_speeches()
    spoke = {r.seat for r in records if r.kind == "TURN"}
    assert spoke == {"pm", "lo"}
    outcome = card.outcome(config, records)
    assert outcome["ranking"] == [
        "Opening Opposition",
        "Opening Government",
        "Closing Government",
        "Closing Opposition",
    ]
    assert outcome["unspoken"] == ["Closing Government", "Closing Opposition"]
    assert outcome["winner"] == "Opening Opposition"


def test_a_debate_everyone_spoke_in_has_the_judges_ranking_whole():
    card = load("british-parliamentary")
    config = config_for(card)
    _, _, records, _ = run(card, config, reply=reply)
    outcome = card.outcome(config, records)
    assert outcome["ranking"] == list(reversed(TEAMS)) and "unspoken" not in outcome


@pytest.mark.django_db
def test_every_face_says_the_teams_that_never_spoke_are_not_ranked():
    source = (CARDS / "british-parliamentary.yaml").read_text()
    card, config, records = ended_after_two_speeches()
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    debate = Debate.objects.create(
        topic=config.topic,
        format=card.name,
        card_source=source,
        owner=owner,
        status="completed",
        visibility="unlisted",
    )
    seats = {
        s.key: Seat.objects.create(debate=debate, key=s.key, role=s.role, side=s.side, name=s.name, order=i)
        for i, s in enumerate(config.seats)
    }
    for r in records:
        Event.objects.create(
            debate=debate,
            ordinal=r.ordinal,
            seat=seats.get(r.seat or ""),
            kind=r.kind,
            step=r.step,
            content=r.content,
            data=r.data,
            visibility=r.visibility,
        )
    debate.winner = "Opening Opposition"
    debate.save()

    assert [(r.ordinal, r.label, r.spoke) for r in selectors.ranked_sides(debate)] == [
        ("1st", "Opening Opposition", True),
        ("2nd", "Opening Government", True),
        ("3rd", "Closing Government", False),
        ("4th", "Closing Opposition", False),
    ]
    client = Client()
    client.force_login(owner)
    for page in (
        client.get(reverse("debate_detail", args=[debate.pk])),
        Client().get(reverse("debate_share", args=[debate.share_token])),
    ):
        verdict = page.content.decode().split('id="verdict"')[1].split("</section>")[0]
        assert "<strong>1st</strong> Opening Opposition" in verdict
        assert "<strong>2nd</strong> Opening Government" in verdict
        assert "<strong>Not ranked</strong> Closing Government" in verdict
        assert "3rd" not in verdict and "4th" not in verdict
        assert verdict.count("(the debate ended before it spoke)") == 2
    exported = json.loads(transcripts.as_json(debate))["verdict"]
    assert exported["ranking"] == ["Opening Opposition", "Opening Government"]
    assert exported["unranked"] == ["Closing Government", "Closing Opposition"]
    markdown = transcripts.as_markdown(debate)
    assert "**Ranking:** 1. Opening Opposition, 2. Opening Government" in markdown
    assert "**Not ranked** (the debate ended before they spoke): Closing Government, Closing Opposition" in markdown
    console = Console(record=True, width=120)
    print_verdict(console, debate)  # the box `manage.py debate` ends with
    box = console.export_text()
    assert "Ranking, best first: 1. Opening Opposition, 2. Opening Government" in box
    assert "Not ranked (the debate ended before they spoke): Closing Government, Closing Opposition" in box
    assert "Winner" not in box
    _, token = create_token(owner, "probe", read_only=True)
    answer = Client().get(f"/api/v1/debates/{debate.pk}", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert answer.status_code == 200
    verdict = json.loads(answer.content)["verdict"]
    assert (verdict["ranking"], verdict["unranked"]) == (exported["ranking"], exported["unranked"])
