"""Hole 7 of issue 13: what one user may run at once, and how often they may start something."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from debates.models import Debate
from rooms.models import Room
from tests.debates.test_form import duel
from tests.debates.test_form import personas as personas
from tests.security.test_access import make_debate

# Not transactional: a debate the view creates never starts (its start waits for a commit that never
# comes), so a burst of starts is counted while its debates are still pending, as right after fifty
# clicks, and nothing here needs an LLM.
pytestmark = pytest.mark.django_db

CAP_MESSAGE = "You already have {n} debates running, the most one person may run at once."


@pytest.fixture
def olive():
    return get_user_model().objects.create_user("olive", password="pw-olive-123")


@pytest.fixture
def caps(settings):
    settings.CHAOSLM_MAX_RUNNING_DEBATES = 2
    settings.CHAOSLM_MAX_AUTO_ROOMS = 1
    settings.CHAOSLM_STARTS_PER_MINUTE = 100
    settings.CHAOSLM_LIMITS_EXEMPT_STAFF = True
    return settings


def logged_in(user):
    client = Client()
    client.force_login(user)
    return client


def test_a_burst_of_starts_stops_at_the_cap_with_a_message_and_starts_nothing_more(olive, caps, personas):
    client = logged_in(olive)
    answers = [client.post(reverse("debate_new"), duel(personas)) for _ in range(5)]
    assert [a.status_code for a in answers] == [302, 302, 200, 200, 200]
    assert escape(CAP_MESSAGE.format(n=2)) in answers[2].content.decode()
    assert Debate.objects.filter(owner=olive).count() == 2
    # Once they finished, the person may start again.
    Debate.objects.update(status=Debate.Status.COMPLETED)
    assert client.post(reverse("debate_new"), duel(personas)).status_code == 302


def test_staff_are_exempt_unless_the_setting_says_otherwise(caps, personas):
    staff = get_user_model().objects.create_user("stella", password="x", is_staff=True)
    for _ in range(2):
        make_debate(staff, "private", status=Debate.Status.RUNNING)
    client = logged_in(staff)
    assert client.post(reverse("debate_new"), duel(personas)).status_code == 302
    caps.CHAOSLM_LIMITS_EXEMPT_STAFF = False
    response = client.post(reverse("debate_new"), duel(personas))
    assert response.status_code == 200 and escape(CAP_MESSAGE.format(n=3)) in response.content.decode()


def test_other_peoples_debates_do_not_count(olive, caps, personas):
    otto = get_user_model().objects.create_user("otto", password="x")
    for _ in range(2):
        make_debate(otto, "public", status=Debate.Status.RUNNING)
    make_debate(olive, "private", status=Debate.Status.WAITING)  # waiting for her: not running
    make_debate(olive, "private", status=Debate.Status.COMPLETED)
    assert logged_in(olive).post(reverse("debate_new"), duel(personas)).status_code == 302


def test_retry_and_speak_are_refused_at_the_cap(olive, caps):
    for _ in range(2):
        make_debate(olive, "private", status=Debate.Status.RUNNING)
    failed = make_debate(olive, "private", status=Debate.Status.ERROR)
    client = logged_in(olive)
    response = client.post(reverse("debate_retry", args=[failed.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 429 and CAP_MESSAGE.format(n=2) in response.content.decode()
    waiting = make_debate(olive, "private", status=Debate.Status.WAITING)
    response = client.post(reverse("debate_speak", args=[waiting.pk]), {"text": "Hi."}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and CAP_MESSAGE.format(n=2) in response.content.decode()
    assert not waiting.events.filter(kind="USER").exists()
    assert Debate.objects.get(pk=failed.pk).status == Debate.Status.ERROR


def test_the_start_rate_limit(olive, caps, personas):
    caps.CHAOSLM_MAX_RUNNING_DEBATES = 100
    caps.CHAOSLM_STARTS_PER_MINUTE = 2
    client = logged_in(olive)
    answers = [client.post(reverse("debate_new"), duel(personas)) for _ in range(3)]
    assert [a.status_code for a in answers] == [302, 302, 200]
    assert "You started 2 debates or auto modes in the last minute, the most allowed. Try again in" in (
        answers[2].content.decode()
    )
    assert Debate.objects.count() == 2


def test_auto_mode_is_capped_per_user(olive, caps):
    Room.objects.create(title="Busy", owner=olive, mode=Room.Mode.AUTO)
    room = Room.objects.create(title="Quiet", owner=olive)
    response = logged_in(olive).post(reverse("room_mode", args=[room.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 429
    assert response.content.decode() == (
        "You already have 1 room in auto mode, the most one person may run at once. "
        "End one (or wait for one to finish), then try again."
    )
    room.refresh_from_db()
    assert room.mode == Room.Mode.MANUAL and not room.messages.exists()


def test_the_debate_command_applies_the_cap_to_the_owner_it_names(olive, caps, personas):
    for _ in range(2):
        make_debate(olive, "private", status=Debate.Status.RUNNING)
    with pytest.raises(CommandError) as raised:
        call_command(
            "debate", "duel", "--topic", "T", "--a", "Ann", "--b", "Ben", "--owner", "olive", stdout=io.StringIO()
        )
    assert str(raised.value).startswith("olive: " + CAP_MESSAGE.format(n=2))
    assert Debate.objects.count() == 2
    with pytest.raises(CommandError, match="there is no user 'nobody'"):
        call_command("debate", "duel", "--topic", "T", "--a", "Ann", "--b", "Ben", "--owner", "nobody")
