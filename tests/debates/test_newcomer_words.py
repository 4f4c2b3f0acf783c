"""Words a newcomer reads on the debate pages, as a fresh walk through the site found them."""

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from debates.estimates import describe
from debates.formats.card import card_format
from debates.models import Debate, Event, Seat
from debates.services import post_message
from debates.setup import SeatChoice, create_debate
from personas.models import Persona

pytestmark = pytest.mark.django_db


def test_an_estimate_of_one_minute_says_minute(llm_server):
    # No call timed yet, on a hosted endpoint: 4 s a call, so 15 calls take exactly a minute.
    assert describe(15) == "15 calls, about 1 minute"
    assert describe(16) == "16 calls, about 2 minutes"


def test_a_seat_chip_names_a_persons_side_and_says_a_side_once(client):
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(owner)
    debate = Debate.objects.create(topic="Cars?", premise="Ban cars", format="standard", owner=owner)
    Seat.objects.create(debate=debate, key="aff", role="debater", side="aff", name="olive", is_human=True, order=0)
    Seat.objects.create(debate=debate, key="neg", role="debater", side="neg", name="Marcus Vale", order=1)
    Seat.objects.create(debate=debate, key="a", role="debater", side="for", name="Ada Sterling", order=2)

    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()

    assert '<strong>olive</strong> <span class="muted">a person · aff</span>' in html
    assert '<strong>Marcus Vale</strong> <span class="muted">neg</span>' in html
    assert '<strong>Ada Sterling</strong> <span class="muted">a · for</span>' in html


def test_home_names_the_default_endpoints_model_in_words(llm_server, client):
    html = client.get(reverse("home")).content.decode()
    assert "Models: <strong>test-model</strong>, from the site's default endpoint." in html
    assert "<strong>default</strong>" not in html


@pytest.mark.django_db(transaction=True)
def test_a_person_in_a_cards_seat_is_told_which_of_their_speeches_is_asked_for(client, llm_server, run_to_rest):
    # A Lincoln-Douglas Affirmative gives a constructive, answers questions, asks some and gives two rebuttals:
    # "it is your turn to speak" alone left them guessing which.
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(owner)
    neg = Persona.objects.create(name="Marcus Vale", role="debater", personality="Marcus argues.")
    debate = create_debate(
        format_name="lincoln-douglas",
        topic="Should voting be compulsory?",
        premise="Voting should be compulsory",
        seats={"aff": SeatChoice(human_name="olive"), "neg": SeatChoice(neg)},
        options={"questions": 1},
        owner=owner,
        card_source=Path("cards/lincoln-douglas.yaml").read_text(),
    )
    said = []
    for _ in range(3):
        debate = run_to_rest(debate.pk)
        assert debate.status == Debate.Status.WAITING
        html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
        said.append(re.search(r"Waiting for you: [^<]*", html).group(0).strip())
        post_message(debate.pk, f"My {len(said)}.")
    assert said == [
        "Waiting for you: it is your turn to give the affirmative constructive (1AC).",
        "Waiting for you: it is your turn to give the affirmative answer 1.",
        "Waiting for you: it is your turn to give the affirmative question 1.",
    ]


BP = Path("cards/british-parliamentary.yaml").read_text()


def test_a_speech_named_after_its_seat_is_said_to_be_that_seats_speech(client):
    # British Parliamentary names its speeches after the seats giving them: "is giving the Prime Minister" was no
    # sentence.
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(owner)
    debate = Debate.objects.create(
        topic="Cars?", premise="Ban cars", format="british-parliamentary", card_source=BP, owner=owner
    )
    seats = {}
    for order, spec in enumerate(s for s in debate.fmt.seat_specs if s.role == "debater"):
        name = "Ada Sterling" if spec.key == "pm" else f"Speaker {order}"
        seats[spec.key] = Seat.objects.create(
            debate=debate, key=spec.key, role="debater", side=spec.side, name=name, order=order
        )
    Event.objects.create(debate=debate, ordinal=0, kind="HEADER", step="header", content="")
    for slot in debate.fmt.layout({}).slots:
        if slot.kind == "PLAN":
            seat, ordinal = seats[slot.seat], slot.index + 1
            Event.objects.create(debate=debate, ordinal=ordinal, seat=seat, kind="PLAN", step=slot.step, content="-")
    Debate.objects.filter(pk=debate.pk).update(status=Debate.Status.RUNNING)

    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()

    assert "Ada Sterling is giving the Prime Minister&#x27;s speech." in html
    assert "giving the Prime Minister." not in html


def test_the_second_part_of_a_speech_named_after_its_seat_is_said_to_be_that_seats_speech_continued():
    # After a point of information the speech goes on: "is giving the Deputy Leader of the Opposition, continued"
    # was no sentence either.
    fmt = card_format(Path("cards/british-parliamentary-poi.yaml").read_text())
    names = {slot.step: fmt.speech_name(slot) for slot in fmt.layout({}).slots if slot.kind == "TURN"}

    assert names["dlo_close"] == "Deputy Leader of the Opposition's speech, continued"
    assert names["pm_close"] == "Prime Minister's speech, continued"
    assert names["pm"] == "Prime Minister's speech"
    assert names["pm_poi"] == "Point of information"


@pytest.mark.django_db(transaction=True)
def test_a_persons_speech_is_exported_and_shown_as_the_speech_it_gives(client, llm_server, run_to_rest):
    # A person's message was stored as step "human": the JSON export gave it no label and its card named no
    # speech, where every model's speech has its card's.
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(owner)
    neg = Persona.objects.create(name="Marcus Vale", role="debater", personality="Marcus argues.")
    debate = create_debate(
        format_name="lincoln-douglas",
        topic="Should voting be compulsory?",
        premise="Voting should be compulsory",
        seats={"aff": SeatChoice(human_name="olive"), "neg": SeatChoice(neg)},
        options={"questions": 1},
        owner=owner,
        card_source=Path("cards/lincoln-douglas.yaml").read_text(),
    )
    for text in ("My case.", "My answer."):
        debate = run_to_rest(debate.pk)
        assert debate.status == Debate.Status.WAITING
        post_message(debate.pk, text)

    events = json.loads(client.get(reverse("debate_export", args=[debate.pk, "json"])).content)["events"]
    spoken = [(e["content"], e["step"], e["label"]) for e in events if e["kind"] == "USER"]
    assert spoken == [
        ("My case.", "affirmative_constructive", "affirmative constructive (1AC)"),
        ("My answer.", "aff_answer_1", "affirmative answer 1"),
    ]
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert '<span class="muted">· affirmative constructive (1AC)</span>' in html
