"""A verdict's scores out of what they are out of: a judge's rubric sums out of the rubric's total, on the debate
page's verdict box and in the terminal's; a verdict that fell back to the running scores, and any other, out of 10.
And a rubric's marks behind the scores, shown with the verdict wherever it is (page, terminal, exports) to whoever
sees the verdict, though the judge's call that gave them is private."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rich.console import Console

from debates.models import Debate, Event, Seat
from debates.privacy import viewers_access
from debates.terminal import print_verdict
from debates.transcripts import as_json, as_markdown

pytestmark = pytest.mark.django_db

# Lincoln-Douglas: its judge scores each debater on three criteria of 10, so a verdict's score is out of 30.
LINCOLN_DOUGLAS = (Path(__file__).resolve().parents[2] / "cards" / "lincoln-douglas.yaml").read_text()
MARKS = {
    "Affirmative": {"framework": 9, "argument": 8, "clash": 8},
    "Negative": {"framework": 6, "argument": 7, "clash": 5},
}


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    return user


def judged(owner, scores, decided):
    """A finished Lincoln-Douglas debate whose judge's private verdict call returned `decided`."""
    debate = Debate.objects.create(
        topic="Resolved: cities should ban cars.",
        format="lincoln-douglas",
        card_source=LINCOLN_DOUGLAS,
        owner=owner,
        status=Debate.Status.COMPLETED,
        winner="Affirmative",
        scores=scores,
        announcement="The affirmative wins on the framework.",
    )
    for order, (key, role, side, name) in enumerate(
        [("aff", "debater", "aff", "Ada"), ("neg", "debater", "neg", "Bob"), ("judge", "judge", "", "Jo")]
    ):
        seat = Seat.objects.create(debate=debate, key=key, role=role, side=side, name=name, order=order)
    Event.objects.create(
        debate=debate, ordinal=40, seat=seat, kind="INTERNAL", step="decide", visibility="private", data=decided
    )
    return debate


def verdict_box(client, debate):
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    return html.split('id="verdict"')[1].split("</section>")[0]


def terminal(debate):
    out = StringIO()
    print_verdict(Console(file=out, width=200), debate)
    return out.getvalue()


def test_a_rubrics_sums_are_shown_out_of_the_rubrics_total(client, owner):
    debate = judged(owner, {"Affirmative": 25, "Negative": 18}, {"winner": "Affirmative", "scores": MARKS})
    box = verdict_box(client, debate)
    assert "Affirmative <strong>25/30</strong>" in box and "Negative <strong>18/30</strong>" in box
    shown = terminal(debate)
    assert "Scores: Affirmative 25/30" in shown and "Negative 18/30" in shown and "/10" not in shown


def test_a_rubric_verdict_that_fell_back_to_the_running_scores_is_out_of_ten(client, owner):
    debate = judged(owner, {"Affirmative": 7, "Negative": 5}, {"fallback": True, "error": "Invalid JSON"})
    assert "Affirmative <strong>7/10</strong> · Negative <strong>5/10</strong>" in verdict_box(client, debate)
    assert "Scores: Affirmative 7/10, Negative 5/10 " in terminal(debate)


def test_a_duels_verdict_is_out_of_ten(client, owner):
    debate = Debate.objects.create(
        topic="Cars?", format="duel", owner=owner, status="completed", winner="Bob", scores={"Ada": 6, "Bob": 8}
    )
    assert "Ada <strong>6/10</strong> · Bob <strong>8/10</strong>" in verdict_box(client, debate)
    assert "Scores: Ada 6/10, Bob 8/10 " in terminal(debate)


def test_a_rubrics_marks_show_with_the_verdict_to_every_viewer(client, owner):
    debate = judged(owner, {"Affirmative": 25, "Negative": 18}, {"winner": "Affirmative", "scores": MARKS})
    debate.visibility, debate.show_thinking = Debate.Visibility.UNLISTED, False
    debate.save()
    client.logout()  # a viewer at the share link, who reads no private event and no internal call
    html = client.get(reverse("debate_share", args=[debate.share_token])).content.decode()
    box = html.split('id="verdict"')[1].split("</section>")[0]
    assert (
        'Affirmative <strong>25/30</strong> <span class="muted">(framework 9, argument 8, clash 8)</span> · '
        'Negative <strong>18/30</strong> <span class="muted">(framework 6, argument 7, clash 5)</span>'
    ) in box
    public = viewers_access(debate)
    assert json.loads(as_json(debate, access=public))["verdict"]["marks"] == MARKS
    assert json.loads(as_json(debate, access=public))["events"] == []
    assert (
        "**Marks:** Affirmative: framework 9, argument 8, clash 8 · Negative: framework 6, argument 7, clash 5"
    ) in as_markdown(debate, access=public)
    assert (
        "Scores: Affirmative 25/30 (framework 9, argument 8, clash 8), Negative 18/30 (framework 6, argument 7, "
        "clash 5)"
    ) in terminal(debate)


def test_marks_that_are_not_the_verdicts_scores_are_not_shown(owner):
    # The verdict kept the running scores (its JSON named no known winner): the rubric's marks are not behind them.
    debate = judged(owner, {"Affirmative": 7, "Negative": 5}, {"winner": "Nobody", "scores": MARKS})
    assert json.loads(as_json(debate))["verdict"]["marks"] == {}
    assert "**Marks:**" not in as_markdown(debate)
    assert "Scores: Affirmative 7/10, Negative 5/10 " in terminal(debate)
