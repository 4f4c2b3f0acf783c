"""The exports name each event's step as its card does (`Format.step_label`), not only by the step's name for code:
the JSON export's events (and so the API's) carry `label`."""

import json
from pathlib import Path

import pytest

from debates.models import Debate, Event, Seat
from debates.transcripts import as_json

pytestmark = pytest.mark.django_db

LINCOLN_DOUGLAS = (Path(__file__).resolve().parents[2] / "cards" / "lincoln-douglas.yaml").read_text()


def lincoln_douglas(owner=None):
    debate = Debate.objects.create(
        topic="Resolved: cities should ban cars.",
        format="lincoln-douglas",
        card_source=LINCOLN_DOUGLAS,
        owner=owner,
        status=Debate.Status.RUNNING,
    )
    aff = Seat.objects.create(debate=debate, key="aff", role="debater", side="aff", name="Ada", order=0)
    neg = Seat.objects.create(debate=debate, key="neg", role="debater", side="neg", name="Bob", order=1)
    for ordinal, seat, kind, step, visibility in [
        (1, aff, "PLAN", "preparation", "private"),
        (3, aff, "TURN", "affirmative_constructive", "public"),
        (4, neg, "TURN", "neg_question_1", "public"),
        (5, aff, "TURN", "aff_answer_1", "public"),
    ]:
        Event.objects.create(
            debate=debate, ordinal=ordinal, seat=seat, kind=kind, step=step, visibility=visibility, content=step
        )
    return debate


LABELS = [
    ("preparation", "preparation"),
    ("affirmative_constructive", "affirmative constructive (1AC)"),
    ("neg_question_1", "negative question 1"),
    ("aff_answer_1", "affirmative answer 1"),
]


def test_the_json_exports_events_carry_their_cards_labels():
    events = json.loads(as_json(lincoln_douglas()))["events"]
    assert [(e["step"], e["label"]) for e in events] == LABELS


def test_a_duels_ordinary_turn_has_no_label_and_a_retired_formats_events_an_empty_one():
    duel = Debate.objects.create(topic="Cars?", format="duel")
    ada = Seat.objects.create(debate=duel, key="a", role="debater", side="for", name="Ada")
    Event.objects.create(debate=duel, ordinal=1, seat=ada, kind="TURN", step="opening", content="Ban them.")
    Event.objects.create(debate=duel, ordinal=2, seat=ada, kind="TURN", step="respond", content="Still.")
    assert [e["label"] for e in json.loads(as_json(duel))["events"]] == ["opening", ""]
    Debate.objects.filter(pk=duel.pk).update(format="retired")
    duel.refresh_from_db()
    assert [e["label"] for e in json.loads(as_json(duel))["events"]] == ["", ""]
