"""What the debate page shows, drawn from the same partials as the live pushes."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from debates.broadcast import card_push, live_parts_html
from debates.models import Debate, Event, Seat

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    return user


def duel(owner, **fields):
    debate = Debate.objects.create(topic="Cars?", premise="Ban cars", format="duel", owner=owner, **fields)
    seats = {
        key: Seat.objects.create(debate=debate, key=key, role=role, side=side, name=name, order=i)
        for i, (key, role, side, name) in enumerate(
            [("a", "debater", "for", "Ada"), ("b", "debater", "against", "Bob"), ("judge", "judge", "", "Jo")]
        )
    }
    return debate, seats


def test_cards_show_each_kind_as_it_should(client, owner):
    debate, seats = duel(owner, status="running")
    Event.objects.create(debate=debate, ordinal=0, kind="HEADER", content="Cars?")
    Event.objects.create(
        debate=debate,
        ordinal=1,
        seat=seats["a"],
        kind="PLAN",
        step="plan",
        visibility="private",
        content="My *secret* plan",
    )
    Event.objects.create(
        debate=debate,
        ordinal=4,
        seat=seats["a"],
        kind="TURN",
        step="opening",
        content="Cars **must** go.",
        data={"truncated_from_words": 900},
    )
    Event.objects.create(
        debate=debate,
        ordinal=6,
        seat=seats["judge"],
        kind="SCORE",
        step="score_first",
        data={"for": "a", "for_name": "Ada", "turn": 1, "score": 7, "reasoning": "Clear."},
    )
    Event.objects.create(
        debate=debate,
        ordinal=29,
        seat=seats["judge"],
        kind="INTERNAL",
        step="verdict_json",
        visibility="private",
        content='{"winner": "Ada"}',
    )
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "<details>" in html and "private to Ada" in html and "My <em>secret</em> plan" in html
    assert "Cars <strong>must</strong> go." in html and "cut from 900 words" in html
    assert '<span class="badge">7/10</span>' in html and "Jo scores <strong>Ada</strong>: Clear." in html
    assert "verdict_json" not in html and '{"winner"' not in html  # internal calls are not shown
    assert 'id="ev-4"' in html and 'style="order: 4"' in html


def test_the_verdict_box_and_chart_follow_the_debate(client, owner):
    debate, seats = duel(
        owner,
        status="completed",
        winner="Bob",
        scores={"Ada": 6, "Bob": 8},
        premise_upheld=False,
        announcement="Bob wins on **evidence**.",
    )
    for ordinal, key, score in [(6, "a", 7), (10, "b", 8), (14, "a", 6)]:
        Event.objects.create(
            debate=debate,
            ordinal=ordinal,
            seat=seats["judge"],
            kind="SCORE",
            data={"for": key, "turn": ordinal // 4, "score": score},
        )
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    verdict = html.split('id="verdict"')[1].split("</section>")[0]
    assert "Winner: <strong>Bob</strong>" in verdict and "Premise rejected" in verdict
    assert "Bob wins on <strong>evidence</strong>." in verdict
    chart = html.split('id="score-chart"')[1].split("</section>")[0]
    assert chart.count("<polyline") == 2 and "Ada <strong>6</strong>" in chart and "Bob <strong>8</strong>" in chart


def test_the_status_line_says_who_is_waiting_and_at_which_stage(client, owner):
    debate = Debate.objects.create(topic="Tea?", format="custom", owner=owner, status="running")
    Event.objects.create(
        debate=debate,
        ordinal=3,
        kind="SYSTEM",
        content="[SYSTEM]: Next speaker: Bob.",
        data={"status": "Round 2 of 3, turn 3."},
    )
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "Round 2 of 3, turn 3." in html.split('id="status"')[1].split("</div>")[0]
    debate.status = "error"
    debate.error_text = "local SmolLM2 could not be reached after 4 tries."
    debate.save()
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "Stopped with an error: local SmolLM2 could not be reached after 4 tries." in html


def test_pushes_are_the_same_partials(owner):
    debate, seats = duel(owner, status="running")
    event = Event.objects.create(debate=debate, ordinal=4, seat=seats["a"], kind="TURN", content="<b>hi</b>")
    push = card_push(event)
    assert push.startswith('<div hx-swap-oob="upsert:#transcript">') and '<article id="ev-4"' in push
    assert "&lt;b&gt;hi&lt;/b&gt;" in push
    parts = live_parts_html(debate)
    for element in ('id="score-chart"', 'id="verdict"', 'id="usage"', 'id="status"'):
        assert element in parts
    assert parts.count('hx-swap-oob="outerHTML"') == 4


def test_a_failed_debate_exports_as_a_partial_transcript(client, owner):
    debate, _ = duel(owner, status="error", error_text="The endpoint is down.")
    response = client.get(reverse("debate_export", args=[debate.pk, "md"]))
    assert response["Content-Disposition"] == f'attachment; filename="partial-{debate.pk}.md"'
    assert "This debate stopped with an error" in response.content.decode()


def test_the_verdict_box_flags_scores_that_contradict_the_winner(client, owner):
    debate, _ = duel(owner, status="completed", winner="Bob", scores={"Ada": 6, "Bob": 8}, announcement="Bob.")
    verdict = client.get(reverse("debate_detail", args=[debate.pk])).content.decode().split('id="verdict"')[1]
    assert "contradict" not in verdict.split("</section>")[0]
    debate.scores = {"Ada": 8, "Bob": 6}
    debate.save()
    verdict = client.get(reverse("debate_detail", args=[debate.pk])).content.decode().split('id="verdict"')[1]
    assert (
        '<p class="contradiction" role="note"><strong>Scores contradict the verdict:</strong> '
        "the judge named Bob the winner but scored Ada higher.</p>"
    ) in verdict.split("</section>")[0]
    # A tie is no contradiction; nor is a verdict with no winner.
    for winner, scores in (("Bob", {"Ada": 7, "Bob": 7}), ("", {"Ada": 8, "Bob": 6})):
        debate.winner, debate.scores = winner, scores
        debate.save()
        assert not debate.contradicts
        assert "contradict" not in live_parts_html(debate).split('id="verdict"')[1].split("</section>")[0]


def test_speaking_pushes_the_new_card_and_the_running_status_in_one_message(client, owner):
    """A page must never show the owner's card beside a stale "your turn": a second message sent then is
    refused, and the debate waits for it for ever."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    from chaoslm import live
    from tests.security.test_access import make_debate

    debate = make_debate(owner, "private", status=Debate.Status.WAITING)
    layer = get_channel_layer()
    spectator = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(live.debate_group(debate.pk), spectator)
    response = client.post(reverse("debate_speak", args=[debate.pk]), {"text": "Tea, **hot**."}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    first = async_to_sync(layer.receive)(spectator)["html"]
    assert "<strong>hot</strong>" in first
    assert 'class="status status-running"' in first and "status-waiting" not in first


def test_the_share_panel_speaks_to_a_visitor_as_a_visitor(client, owner):
    from django.test import Client

    debate, _ = duel(owner, visibility="unlisted")
    stranger = Client()
    via_link = stranger.get(reverse("debate_share", args=[debate.share_token])).content.decode()
    assert (
        "You are watching through its share link: anyone you give this page's address can watch it too, "
        "until its owner withdraws the link."
    ) in via_link
    assert "owner's to give" not in via_link and 'class="share-link"' not in via_link
    debate.visibility = "public"
    debate.save(update_fields=["visibility"])
    public = stranger.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "Public: anyone can find it and watch it." in public and "owner's to give" not in public
    own = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert 'class="share-link"' in own and "You are watching through" not in own


@pytest.mark.parametrize(
    "answer, shown",
    [
        ('{"winner": "Bob", "scores": {"Ada": 6, "Bob": 8}}', "The judge gave no reasons for its verdict."),
        ('```json\n{"winner": "Bob", "reason": "Bob answered every point."}\n```', "Bob answered every point."),
        (
            '{"score": 7, "reasoning": "One sentence explaining the score."}',
            "The judge gave no reasons for its verdict.",
        ),
        ("One sentence explaining any change.", "The judge gave no reasons for its verdict."),
        ("Bob made the stronger case.", "Bob made the stronger case."),
        # Malformed or cut-off JSON: its sentence if it began one, never the braces.
        ('{"winner": "Bob", "announcement": "Bob answered every point', "Bob answered every point"),
        ('{"winner": "Bob", "scores": {"Ada": 6', "The judge gave no reasons for its verdict."),
    ],
)
def test_the_verdict_box_shows_the_judges_reason_never_its_json(client, owner, answer, shown):
    debate, seats = duel(owner, status="completed", winner="Bob", scores={"Ada": 6, "Bob": 8}, announcement=answer)
    Event.objects.create(
        debate=debate, ordinal=30, seat=seats["judge"], kind="VERDICT", step="announce", content=answer
    )
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    verdict = html.split('id="verdict"')[1].split("</section>")[0]
    assert f'<div class="md"><p>{shown}</p>' in verdict
    card = html.split('id="ev-30"')[1].split("</article>")[0]
    assert f"<p>{shown}</p>" in card
    for raw in ("{", "One sentence explaining"):
        assert raw not in verdict and raw not in card


def test_the_running_scores_say_what_they_are_beside_the_verdicts(client, owner):
    debate, seats = duel(owner, status="completed", winner="Bob", scores={"Ada": 5, "Bob": 9})
    Event.objects.create(debate=debate, ordinal=6, seat=seats["judge"], kind="SCORE", data={"for": "a", "score": 7})
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    chart = html.split('id="score-chart"')[1].split("</section>")[0]
    assert (
        "The judge's running score after each turn, out of 10: it weighs the whole debate so far. "
        "The verdict's scores are the judge's final judgment, given separately."
    ) in chart
    assert '<li class="muted">Latest running scores:</li>' in chart


def test_a_duel_its_owner_ended_says_after_which_turn(client, owner):
    debate, seats = duel(owner, status="completed", is_ending=True, options={"turns": 6})
    for ordinal, key in [(4, "a"), (8, "b")]:
        Event.objects.create(debate=debate, ordinal=ordinal, seat=seats[key], kind="TURN", content="Said.")
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    status = html.split('id="status"')[1].split("</div>")[0]
    assert 'Completed. <span class="muted">· Ended by its owner after turn 2 of 6.</span>' in status
    # One that ran its course says nothing of the kind.
    debate.is_ending = False
    debate.save(update_fields=["is_ending"])
    assert "Ended by its owner" not in client.get(reverse("debate_detail", args=[debate.pk])).content.decode()


def test_system_lines_are_worded_for_people_while_the_models_keep_the_protocols(client, owner):
    from debates.formats.moderated import INTRO, TERMINATION

    debate = Debate.objects.create(topic="Is it banned?", format="classic", owner=owner, status="completed")
    intro = INTRO.format(topic=debate.topic)
    Event.objects.create(debate=debate, ordinal=1, kind="SYSTEM", step="introduction", content=intro)
    Event.objects.create(debate=debate, ordinal=2, kind="SYSTEM", step="next", content="[SYSTEM]: Next speaker: Ada.")
    Event.objects.create(debate=debate, ordinal=3, kind="SYSTEM", step="termination", content=TERMINATION)
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    lines = [html.split(f'id="ev-{n}"')[1].split("</article>")[0] for n in (1, 2, 3)]
    assert '<p class="system-line">The moderator introduces the topic and the participants.</p>' in lines[0]
    assert '<p class="system-line">Next speaker: Ada.</p>' in lines[1]
    assert (
        '<p class="system-line">The owner ended the debate early: the moderator gives a final summary.</p>' in lines[2]
    )
    assert "[SYSTEM]" not in "".join(lines) and "?." not in "".join(lines)
    # The events keep the protocol's text: it is what the models read.
    assert Event.objects.get(debate=debate, ordinal=3).content == TERMINATION


def test_a_debate_asked_to_end_hides_its_end_button(client, owner):
    """Its status line says it is ending (the class the controls' CSS follows), so End debate does not stay."""
    debate, _ = duel(owner, status="running", is_ending=True)
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert 'class="status status-running status-ending"' in html
    css = (Path(__file__).resolve().parents[2] / "static/css/chaoslm.css").read_text()
    assert "#status.status-ending ~ .layout .when-active { display: none; }" in css
    debate.is_ending = False
    debate.save(update_fields=["is_ending"])
    assert "status-ending" not in client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
