"""The Markdown export heads each public statement with its speaker and the step its format names
(`Format.step_title`): a cross-examination question reads as one, an ordinary turn names no step."""

from pathlib import Path

import pytest

from debates.models import Debate, Event, Seat
from debates.transcripts import as_markdown


def debate_with(format_name, seats, turns):
    debate = Debate.objects.create(topic="Cars in cities", format=format_name, status=Debate.Status.COMPLETED)
    made = {
        key: Seat.objects.create(debate=debate, key=key, role="debater", side=side, order=i, name=name)
        for i, (key, side, name) in enumerate(seats)
    }
    for ordinal, (key, step, text) in enumerate(turns, start=1):
        # No stored card: a format this version lacks renders none.
        Event(debate=debate, ordinal=ordinal, kind="TURN", seat=made[key], step=step, content=text).save(card=False)
    return debate


@pytest.mark.django_db
def test_a_cross_examination_reads_as_questions_and_answers():
    debate = debate_with(
        "structured",
        [("affirmative", "affirmative", "Ada"), ("negative", "negative", "Bob")],
        [
            ("affirmative", "rebuttal", "You are wrong."),
            ("affirmative", "question_1", "Why?"),
            ("negative", "answer_1", "Because."),
        ],
    )
    text = as_markdown(debate)
    assert "### Ada — Rebuttal\n\nYou are wrong.\n" in text
    assert "### Ada — Cross-examination question 1\n\nWhy?\n" in text
    assert "### Bob — Cross-examination answer 1\n\nBecause.\n" in text


@pytest.mark.django_db
def test_a_duels_ordinary_turn_names_no_step_and_its_opening_and_close_do():
    debate = debate_with(
        "duel",
        [("a", "for", "Ada"), ("b", "against", "Bob")],
        [("a", "opening", "Ban them."), ("b", "respond", "No."), ("a", "respond_final", "Yes.")],
    )
    text = as_markdown(debate)
    assert "### Ada — Opening statement\n\nBan them.\n" in text
    assert "### Bob\n\nNo.\n" in text
    assert "### Ada — Closing argument\n\nYes.\n" in text


@pytest.mark.django_db
def test_a_debate_of_a_format_this_version_lacks_still_exports_with_plain_headings():
    debate = debate_with("retired", [("a", "for", "Ada")], [("a", "opening", "Ban them.")])
    Debate.objects.filter(pk=debate.pk).update(winner="Ada")
    debate.refresh_from_db()
    text = as_markdown(debate)
    assert "### Ada\n\nBan them.\n" in text and "**Winner:** Ada" in text


@pytest.mark.django_db
def test_a_cards_private_steps_are_named_by_their_labels():
    card = (Path(__file__).resolve().parents[2] / "cards" / "lincoln-douglas.yaml").read_text()
    debate = Debate.objects.create(
        topic="Resolved: cities should ban cars.", format="lincoln-douglas", card_source=card, status="completed"
    )
    ada = Seat.objects.create(debate=debate, key="aff", role="debater", side="aff", order=0, name="Ada")
    jo = Seat.objects.create(debate=debate, key="judge", role="judge", order=2, name="Jo")
    for ordinal, seat, kind, step in [
        (1, ada, "PLAN", "preparation"),
        (30, jo, "THINK", "deliberate"),
        (31, jo, "INTERNAL", "confirm_winner"),
    ]:
        Event.objects.create(
            debate=debate, ordinal=ordinal, seat=seat, kind=kind, step=step, visibility="private", content="Notes."
        )
    text = as_markdown(debate)
    assert "<details><summary>Ada · preparation (private)</summary>\n\nNotes.\n" in text
    assert "<details><summary>Jo · deliberate (private)</summary>" in text
    assert "<details><summary>Jo · confirm winner (private)</summary>" in text
    assert "plan (private)" not in text and "internal (private)" not in text


@pytest.mark.django_db
def test_a_duels_plan_keeps_its_name_and_a_retired_formats_private_steps_their_kinds():
    debate = debate_with("duel", [("a", "for", "Ada")], [])
    ada = debate.seats.get()
    Event.objects.create(debate=debate, ordinal=1, seat=ada, kind="PLAN", step="plan", visibility="private")
    assert "<details><summary>Ada · plan (private)</summary>" in as_markdown(debate)
    Debate.objects.filter(pk=debate.pk).update(format="retired")
    debate.refresh_from_db()
    Event.objects.filter(debate=debate).update(step="strategy")
    assert "<details><summary>Ada · plan (private)</summary>" in as_markdown(debate)
