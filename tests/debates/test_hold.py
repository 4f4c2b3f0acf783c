"""The owner's hold of a debate's start (debates/hold.py): no model is called before the start time, under the
inline runner and on Celery; a restart's sweep schedules held starts again; the page and the share page count
down; the owner may start it now; the before-vote is open meanwhile; bad holds get a message.

A hold is set in minutes; the tests move the start time to a few seconds away, as no test can wait minutes."""

import asyncio
import json
import re
import threading
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.admin.sites import site
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from audience import votes
from audience.models import PollVote
from chaoslm.runner import inline
from debates import hold, recovery
from debates.broadcast import live_parts_html
from debates.models import Debate
from debates.setup import SeatChoice, create_debate
from debates.work import start_when_due
from personas.models import Persona, import_personas
from tests.conftest import ENGINE_RUNNER

pytestmark = pytest.mark.django_db(transaction=True)

PERSONAS = Path(__file__).resolve().parents[2] / "personas" / "samples"


@pytest.fixture
def personas():
    files = ["ada-sterling.yaml", "marcus-vale.yaml", "judge-okafor.yaml"]
    saved = import_personas([(f, (PERSONAS / f).read_text()) for f in files])
    return {p.name: p for p in saved}


@pytest.fixture
def owner(people):
    return people["owner"]


def held_duel(personas, owner=None, minutes=5, visibility="unlisted"):
    seats = {
        "a": SeatChoice(personas["Ada Sterling"]),
        "b": SeatChoice(personas["Marcus Vale"]),
        "judge": SeatChoice(personas["Judge Ines Okafor"]),
    }
    return create_debate(
        format_name="duel",
        topic="Should cities ban private cars?",
        seats=seats,
        options={"turns": 2},
        owner=owner,
        visibility=visibility,
        hold_minutes=minutes,
    )


def hold_for(debate, seconds):
    """Move the start time `seconds` from now; returns that moment on the test server's clock (monotonic)."""
    inline.loop()  # its first start warms the HTTP client up for seconds: not inside the few the test waits
    debate.starts_at = timezone.now() + timedelta(seconds=seconds)
    debate.save(update_fields=["starts_at"])
    return time.monotonic() + seconds


def wait_for(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def first_call(llm_server):
    return min(r.started for r in llm_server.requests)


# -- the run never begins before the start ---------------------------------------------------------------------------
def test_a_new_debate_with_a_hold_is_pending_with_its_start_time(personas, owner):
    before = timezone.now()
    debate = held_duel(personas, owner, minutes=5)
    assert debate.status == Debate.Status.PENDING and debate.started_at is None
    assert before + timedelta(minutes=5) <= debate.starts_at <= timezone.now() + timedelta(minutes=5)
    assert debate.held()
    assert held_duel(personas, owner, minutes=0, visibility="private").starts_at is None


def test_the_engine_does_not_start_a_held_debate_whatever_asks_it_to(personas, llm_server, run_to_rest):
    debate = held_duel(personas)
    rested = run_to_rest(debate.pk)  # the plain advance, inline or as a Celery task
    assert rested.status == Debate.Status.PENDING and rested.started_at is None
    assert not rested.events.exists()
    assert llm_server.requests == []


def test_the_inline_runner_starts_a_held_debate_at_its_start_time_and_not_before(personas, llm_server):
    debate = held_duel(personas)
    start = hold_for(debate, 2.0)
    hold.schedule(debate)
    time.sleep(1.2)
    debate.refresh_from_db()
    assert llm_server.requests == [] and debate.status == Debate.Status.PENDING
    wait_for(lambda: Debate.objects.get(pk=debate.pk).status == Debate.Status.COMPLETED)
    inline.wait_idle(60)
    debate.refresh_from_db()
    assert debate.started_at >= debate.starts_at
    assert first_call(llm_server) >= start - 0.05


def test_a_start_scheduled_twice_runs_the_debate_once(personas, llm_server):
    debate = held_duel(personas)
    hold_for(debate, 0.3)

    async def twice():
        return await asyncio.gather(start_when_due(debate.pk), start_when_due(debate.pk))

    assert sorted(asyncio.run(twice())) == ["completed", "started"]
    asked = [json.dumps(r.messages) for r in llm_server.requests]
    assert asked and len(set(asked)) == len(asked)  # no call made twice


def test_after_a_restart_the_sweep_schedules_held_starts_again(personas, llm_server, settings):
    settings.CHAOSLM_RUNNER = "inline"
    debate = held_duel(personas)  # as after a restart: nothing waits for its start any more
    start = hold_for(debate, 1.5)
    assert recovery.recover() == [debate.pk]
    assert llm_server.requests == []
    wait_for(lambda: Debate.objects.get(pk=debate.pk).status == Debate.Status.COMPLETED)
    inline.wait_idle(60)
    assert first_call(llm_server) >= start - 0.05


@pytest.mark.skipif(ENGINE_RUNNER != "celery", reason="the Celery run (CHAOSLM_TEST_ENGINE_RUNNER=celery)")
def test_on_celery_the_start_is_a_task_with_an_eta_and_the_sweep_submits_an_overdue_one(
    personas, llm_server, settings, request
):
    request.getfixturevalue("_celery_worker")
    settings.CHAOSLM_RUNNER = "celery"
    debate = held_duel(personas)
    start = hold_for(debate, 3.0)
    hold.schedule(debate)
    time.sleep(2.0)
    assert llm_server.requests == [] and Debate.objects.get(pk=debate.pk).status == Debate.Status.PENDING
    wait_for(lambda: Debate.objects.get(pk=debate.pk).status == Debate.Status.COMPLETED)
    assert first_call(llm_server) >= start - 0.05

    # A start the workers lost (overdue past the grace) is submitted by beat's sweep; one still to come is not.
    llm_server.reset()
    overdue, later = held_duel(personas), held_duel(personas)
    hold_for(overdue, -recovery.HELD_GRACE - 5)
    assert recovery.recover() == [overdue.pk]
    wait_for(lambda: Debate.objects.get(pk=overdue.pk).status == Debate.Status.COMPLETED)
    later.refresh_from_db()
    assert later.status == Debate.Status.PENDING and not later.events.exists()


# -- the page, the share page, "Start now" ---------------------------------------------------------------------------
def test_the_page_and_the_share_page_count_down_and_the_before_vote_is_open(personas, owner, llm_server):
    debate = held_duel(personas, owner)
    client = Client()
    client.force_login(owner)
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    starts = timezone.localtime(debate.starts_at)
    # The start time as text (it stands without JS), the seconds left for the countdown, and the owner's button.
    assert f'<time datetime="{starts.isoformat()}">{starts:%H:%M:%S} UTC</time>' in page
    assert 'role="timer"' in page and re.search(r'data-hold-seconds="(29[0-9]|300)">[45]:[0-9]{2}</span>', page)
    assert "Start now" in page and reverse("debate_start_now", args=[debate.pk]) in page
    # The start is stated once, in the hold's box; the status line says only that it is held.
    assert "Held so an audience can gather: it has not started." in page
    assert page.count(f"{starts:%H:%M:%S} UTC") == 1
    # The box heads the column the transcript will fill, beside the panel: no empty column.
    column = page.split('<div class="main-column">')[1].split('<aside class="side-panel">')[0]
    assert '<section id="hold-box"' in column and '<section id="transcript"' in column
    assert "status-held" in page  # the End button is hidden while held (static/css)

    stranger = Client()
    shared = stranger.get(reverse("debate_share", args=[debate.share_token])).content.decode()
    assert 'id="hold-box"' in shared and "<time" in shared and "Start now" not in shared
    assert 'href="#poll-box"' in shared

    # The vote before the debate is open during the hold, and counts.
    assert votes.poll_of(debate).open_phase(timezone.now()).name == "before"
    vote_url = reverse("debate_share_poll_vote", args=[debate.share_token])
    assert stranger.post(vote_url, {"phase": "before", "choice": "a"}).status_code == 302
    assert PollVote.objects.filter(debate=debate, phase="before", choice="a").count() == 1
    assert llm_server.requests == []


def test_the_owner_starts_it_now_and_the_countdown_goes_from_every_page(personas, owner, people, llm_server):
    debate = held_duel(personas, owner)
    hold.schedule(debate)  # waiting five minutes on the inline runner, as the form leaves it
    url = reverse("debate_start_now", args=[debate.pk])

    other = Client()
    other.force_login(people["other"])
    assert other.post(url).status_code == 404  # an unlisted debate is not theirs to see at its own address
    assert Client().post(url).status_code == 302  # to the login page
    assert Debate.objects.get(pk=debate.pk).held()

    client = Client()
    client.force_login(owner)
    response = client.post(url, follow=True)
    assert "The debate is starting now." in response.content.decode()
    wait_for(lambda: Debate.objects.get(pk=debate.pk).status == Debate.Status.COMPLETED)
    inline.wait_idle(60)
    debate.refresh_from_db()
    assert llm_server.requests and not debate.held()
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert 'role="timer"' not in page
    # Open pages are told: the pushed live parts replace the countdown with nothing.
    assert '<div id="hold-box" hidden hx-swap-oob="outerHTML"></div>' in live_parts_html(debate)
    again = client.post(url, follow=True).content.decode()
    assert "it has started already" in again


# -- bad input -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["-5", "abc", "99999999999999999999999", "٣", "3", "1e3"])
def test_a_bad_hold_in_the_form_gets_a_message_and_nothing_is_created(personas, owner, value):
    client = Client()
    client.force_login(owner)
    data = {
        "format": "duel",
        "topic": "Tea or coffee?",
        "visibility": "unlisted",
        "seat_a": Persona.objects.get(name="Ada Sterling").pk,
        "seat_b": Persona.objects.get(name="Marcus Vale").pk,
        "seat_judge": Persona.objects.get(name="Judge Ines Okafor").pk,
        "option_turns": 2,
        "option_word_limit": 0,
        "hold": value,
    }
    response = client.post(reverse("debate_new"), data)
    assert response.status_code == 200
    text = response.content.decode()
    assert escape(f"Select a valid choice. {value} is not one of the available choices.") in text
    assert 'value="Tea or coffee?"' in text  # what the person typed is kept
    assert not Debate.objects.exists()


def test_the_form_offers_holds_up_to_the_setting_and_a_good_one_holds_the_debate(personas, owner, settings):
    settings.CHAOSLM_HOLD_MAX_MINUTES = 10
    client = Client()
    client.force_login(owner)
    form = client.get(reverse("debate_new")).content.decode()
    assert '<option value="10">10 minutes</option>' in form and 'value="15"' not in form
    data = {
        "format": "duel",
        "topic": "Tea or coffee?",
        "visibility": "public",
        "seat_a": Persona.objects.get(name="Ada Sterling").pk,
        "seat_b": Persona.objects.get(name="Marcus Vale").pk,
        "option_turns": 2,
        "option_word_limit": 0,
        "hold": "2",
    }
    assert client.post(reverse("debate_new"), data).status_code == 302
    debate = Debate.objects.get()
    held_for = debate.starts_at - debate.created_at
    assert debate.held() and held_for == pytest.approx(timedelta(minutes=2), abs=timedelta(seconds=1))
    hold.start_now(debate)  # nothing left waiting after the test
    inline.wait_idle(60)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("-1", "--hold must be a whole number from 0 to 60, not '-1'."),
        ("abc", "--hold must be a whole number from 0 to 60, not 'abc'."),
        ("61", "--hold must be a whole number from 0 to 60, not '61'."),
    ],
)
def test_a_bad_hold_on_the_command_line_gets_a_message(personas, value, message):
    with pytest.raises(CommandError) as refused:
        call_command("debate", "duel", "--topic", "T", "--a", "Ada Sterling", "--b", "Marcus Vale", "--hold", value)
    assert str(refused.value) == message
    assert not Debate.objects.exists()


def test_the_command_sits_out_the_hold_then_runs_the_debate(personas, llm_server):
    out = StringIO()
    args = ["duel", "--topic", "T", "--a", "Ada Sterling", "--b", "Marcus Vale", "--turns", "2", "--hold", "1"]

    def run():
        try:
            call_command("debate", *args, stdout=out)
        finally:
            connection.close()

    command = threading.Thread(target=run)
    command.start()
    wait_for(lambda: "Held until" in out.getvalue())
    time.sleep(1.2)
    assert llm_server.requests == []
    debate = Debate.objects.get()
    start = hold_for(debate, 0.5)  # as if the minute had passed
    command.join(60)
    debate.refresh_from_db()
    assert debate.status == Debate.Status.COMPLETED and first_call(llm_server) >= start - 0.05
    assert f"debate {debate.pk} completed" in out.getvalue()


def test_the_admin_moves_the_start_within_the_bound_and_refuses_past_it(personas, owner, llm_server):
    debate = held_duel(personas, owner)
    model_admin = site._registry[Debate]
    request = RequestFactory().post("/")
    request.user = get_user_model().objects.create_superuser("root", password="pw-root-123")
    form_class = model_admin.get_form(request, debate, change=True, fields=["starts_at"])

    def form(when):
        local = timezone.localtime(when)
        data = {"starts_at_0": f"{local:%Y-%m-%d}", "starts_at_1": f"{local:%H:%M:%S}"}
        return form_class(data, instance=debate)

    too_late = form(timezone.now() + timedelta(minutes=61))
    assert not too_late.is_valid()
    assert too_late.errors["starts_at"] == ["A debate may be held at most 60 minutes (CHAOSLM_HOLD_MAX_MINUTES)."]

    sooner = form(timezone.now() + timedelta(seconds=2))
    assert sooner.is_valid(), sooner.errors
    start = time.monotonic() + 1
    model_admin.save_model(request, sooner.save(commit=False), sooner, True)
    wait_for(lambda: Debate.objects.get(pk=debate.pk).status == Debate.Status.COMPLETED)
    inline.wait_idle(60)
    assert first_call(llm_server) >= start - 0.05
    assert "starts_at" in model_admin.get_readonly_fields(request, Debate.objects.get(pk=debate.pk))
