"""The debate's status line names who is doing what at which stage: on a freshly loaded page and live alike."""

import json

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.urls import reverse

from debates.broadcast import DebateBroadcaster
from debates.formats import get_format
from debates.formats.duel import announcement_text
from debates.models import Debate, Event, Seat
from debates.records import record_of
from debates.selectors import doing_now
from debates.status import activity
from tests.debates.formats.test_duel import config, run


def test_each_step_of_a_duel_in_words():
    calls, _, _ = run(config(turns=3))
    names = {"a": "Ada Sterling", "b": "Marcus Vale", "judge": "Ines Okafor"}
    duel = get_format("duel")
    said = [activity(names[c.seat], c, duel, {"turns": 3}) for c in sorted(calls, key=lambda c: c.ordinal)]
    assert said == [
        "Ada Sterling is planning (private)",
        "Marcus Vale is planning (private)",
        "Ada Sterling is thinking over the opening statement (private)",
        "Ada Sterling is giving the opening statement",
        "Ines Okafor is evaluating turn 1 of 3 (private)",
        "Ines Okafor is scoring turn 1 of 3",
        "Marcus Vale is thinking over turn 2 of 3 (private)",
        "Marcus Vale is giving turn 2 of 3",
        "Ines Okafor is evaluating turn 2 of 3 (private)",
        "Ines Okafor is scoring turn 2 of 3",
        "Ada Sterling is thinking over turn 3 of 3 (private)",
        "Ada Sterling is giving turn 3 of 3",
        "Ines Okafor is evaluating turn 3 of 3 (private)",
        "Ines Okafor is scoring turn 3 of 3",
        "Ines Okafor is deliberating on the verdict (private)",
        "Ines Okafor is naming the winner (private)",
        "Ines Okafor is writing down the verdict (private)",
        "Ines Okafor is announcing the verdict",
    ]


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        ('{"announcement": "Bob wins on **evidence**."}', "Bob wins on **evidence**."),
        ('```json\n{"text": "Ada carried it."}\n```', "Ada carried it."),
        ("Bob wins. {not json}", "Bob wins. {not json}"),
        # No text to take: the page says so rather than show the object.
        ('{"winner": "Bob"}', "The judge gave no reasons for its verdict."),
        ("[1, 2]", "The judge gave no reasons for its verdict."),
    ],
)
def test_an_announcement_in_json_is_read_for_its_text(reply, shown):
    assert announcement_text(reply) == shown


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    return user


def running_duel(owner):
    debate = Debate.objects.create(
        topic="Cars?", format="duel", owner=owner, status="running", options={"turns": 3, "word_limit": 0}
    )
    seats = {
        key: Seat.objects.create(debate=debate, key=key, role=role, side=side, name=name, order=i)
        for i, (key, role, side, name) in enumerate(
            [
                ("a", "debater", "for", "Ada Sterling"),
                ("b", "debater", "against", "Marcus Vale"),
                ("judge", "judge", "", "Ines Okafor"),
            ]
        )
    }
    Event.objects.create(debate=debate, ordinal=0, kind="HEADER", step="header", content="Cars?")
    return debate, seats


def status_of(html):
    return " ".join(html.split('id="status"')[1].split("</div>")[0].split(">", 1)[1].split())


@pytest.mark.django_db
def test_a_freshly_loaded_page_names_the_seats_at_work(client, owner):
    debate, seats = running_duel(owner)
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert status_of(html) == (
        '<span class="dot"></span> Ada Sterling is planning (private); Marcus Vale is planning (private).'
    )
    Event.objects.create(debate=debate, ordinal=1, seat=seats["a"], kind="PLAN", step="plan", content="p")
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert status_of(html) == (
        '<span class="dot"></span> Marcus Vale is planning (private); '
        "Ada Sterling is thinking over the opening statement (private)."
    )
    debate.status = "completed"
    debate.save()
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert status_of(html) == '<span class="dot"></span> Completed.'


@pytest.mark.django_db(transaction=True)
def test_live_pushes_name_the_seats_even_before_the_state_loads(owner):
    """The live line says what the loaded page says; a step that starts before any page watched still
    gets its seat's name, not its key."""
    debate, seats = running_duel(owner)
    broadcaster = DebateBroadcaster(debate.pk)
    sent = []
    broadcaster._send = sent.append
    broadcaster._watched = lambda: False
    async_to_sync(broadcaster.debate_changed)(debate)
    records = [record_of(e, None) for e in debate.events.all()]
    steps = [s for s in get_format("duel").next_steps(config(turns=3), records).steps if s.calls_llm]
    for step in steps:
        broadcaster.step_started(debate, step)
    broadcaster._watched = lambda: True
    broadcaster.waiting(debate, steps[0], 5, "Rate limited")
    line = " ".join(sent[-1].split('id="status"')[1].split("</div>")[0].split(">", 1)[1].split())
    assert line == (
        '<span class="dot"></span> Ada Sterling is planning (private); Marcus Vale is planning (private). '
        '<span class="muted">· Rate limited: trying again in 5s</span>'
    )
    assert doing_now(debate, list(seats.values())) == [
        "Ada Sterling is planning (private)",
        "Marcus Vale is planning (private)",
    ]


def test_a_json_announcement_shows_as_its_text_in_the_verdict_box_and_card(client, db):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    debate = Debate.objects.create(
        topic="Cars?",
        format="duel",
        owner=user,
        status="completed",
        winner="Bob",
        scores={"Ada": 6, "Bob": 8},
        announcement=json.dumps({"announcement": "Bob wins on **evidence** <script>x</script>."}),
    )
    judge = Seat.objects.create(debate=debate, key="judge", role="judge", name="Jo", order=0)
    Event.objects.create(
        debate=debate, ordinal=30, seat=judge, kind="VERDICT", step="announce", content=debate.announcement
    )
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    verdict = html.split('id="verdict"')[1].split("</section>")[0]
    card = html.split('id="ev-30"')[1].split("</article>")[0]
    for box in (verdict, card):
        assert "Bob wins on <strong>evidence</strong>" in box
        assert "announcement" not in box and "{" not in box and "<script" not in box


@pytest.mark.django_db(transaction=True)
def test_the_line_names_the_embedded_models_speed_while_it_is_slow(owner):
    """A slow machine makes a debate slow, and the line says so (issue 26.1): the seat at work's last pace."""
    debate, _ = running_duel(owner)
    broadcaster = DebateBroadcaster(debate.pk)
    sent = []
    broadcaster._send = sent.append
    broadcaster._watched = lambda: True
    async_to_sync(broadcaster.debate_changed)(debate)
    records = [record_of(e, None) for e in debate.events.all()]
    plan_a, plan_b = [s for s in get_format("duel").next_steps(config(turns=3), records).steps if s.calls_llm]
    broadcaster._watched = lambda: False  # no writing cards: this test reads the line only
    broadcaster.step_started(debate, plan_a)
    broadcaster._watched = lambda: True
    broadcaster.pace(debate, plan_a, 7.4)
    assert status_of(sent[-1]) == (
        '<span class="dot"></span> Ada Sterling is planning (private). '
        '<span class="muted">· local model at 7 tokens/s</span>'
    )
    pushes = len(sent)
    broadcaster.pace(debate, plan_a, 7.2)  # the same words: nothing to redraw
    assert len(sent) == pushes
    broadcaster.pace(debate, plan_a, 95.0)  # fast again: no note
    assert status_of(sent[-1]) == '<span class="dot"></span> Ada Sterling is planning (private).'
    broadcaster._watched = lambda: False
    broadcaster.step_started(debate, plan_b)
    broadcaster._watched = lambda: True
    broadcaster.pace(debate, plan_b, 11.0)  # the slowest seat at work speaks for the debate
    assert status_of(sent[-1]) == (
        '<span class="dot"></span> Ada Sterling is planning (private); Marcus Vale is planning (private). '
        '<span class="muted">· local model at 11 tokens/s</span>'
    )
