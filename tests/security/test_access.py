"""Who gets what: anonymous, another user, the owner and staff, for each visibility and each action."""

import asyncio

import pytest
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from chaoslm.runner import inline
from config.routing import websocket_urlpatterns
from debates.models import Debate, Event, Seat
from personas.models import import_personas

pytestmark = pytest.mark.django_db(transaction=True)

PERSONA = "name: {n}\nrole: {r}\npersonality: {n} speaks.\n"
WHO = ["anonymous", "other", "owner", "staff"]


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def make_debate(owner, visibility, status=Debate.Status.COMPLETED):
    debate = Debate.objects.create(
        topic="Tea or coffee?",
        format="standard",
        owner=owner,
        visibility=visibility,
        status=status,
        options={"max_turns": 2},
    )
    Seat.objects.create(debate=debate, key="p1", role="debater", name="Ada", order=1, system_prompt="Ada speaks.")
    Seat.objects.create(debate=debate, key="p2", role="debater", name="Bob", order=2, system_prompt="Bob speaks.")
    Seat.objects.create(debate=debate, key="human", role="participant", name="olive", order=3, is_human=True)
    Event.objects.create(debate=debate, ordinal=0, kind="HEADER", content="Tea or coffee?")
    return debate


def client_for(who, people):
    client = Client()
    if who != "anonymous":
        client.force_login(people[who])
    return client


# The expected status for each visibility: private, unlisted, public.
VIEW = {"anonymous": (404, 404, 200), "other": (404, 404, 200), "owner": (200, 200, 200), "staff": (200, 200, 200)}
SHARE = {who: (404, 200, 200) for who in WHO}
ACT = {"anonymous": (302, 302, 302), "other": (404, 404, 403), "owner": None, "staff": (403, 403, 403)}
DELETE = {"anonymous": (302, 302, 302), "other": (404, 404, 403), "owner": (302, 302, 302), "staff": (302, 302, 302)}
VISIBILITIES = ["private", "unlisted", "public"]


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_view_share_and_export(people, who, visibility):
    debate = make_debate(people["owner"], visibility)
    client = client_for(who, people)
    index = VISIBILITIES.index(visibility)
    assert client.get(reverse("debate_detail", args=[debate.pk])).status_code == VIEW[who][index]
    assert client.get(reverse("debate_export", args=[debate.pk, "md"])).status_code == VIEW[who][index]
    assert client.get(reverse("debate_share", args=[debate.share_token])).status_code == SHARE[who][index]
    assert (
        client.get(reverse("debate_share_export", args=[debate.share_token, "json"])).status_code == SHARE[who][index]
    )
    assert client.get(reverse("debate_share", args=["not-the-token"])).status_code == 404


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("visibility", VISIBILITIES)
@pytest.mark.parametrize("action", ["debate_end", "debate_speak", "debate_retry", "debate_visibility"])
def test_owner_only_actions(people, who, visibility, action, llm_server, runner_idle):
    debate = make_debate(people["owner"], visibility, status=Debate.Status.WAITING)
    client = client_for(who, people)
    data = {"text": "Hello there.", "visibility": visibility}
    response = client.post(reverse(action, args=[debate.pk]), data)
    index = VISIBILITIES.index(visibility)
    if who == "owner":
        assert response.status_code in (204, 302)
    else:
        assert response.status_code == ACT[who][index]
        if response.status_code == 302:
            assert response["Location"].startswith("/accounts/login/")
        debate.refresh_from_db()
        assert (debate.is_ending, debate.status) == (False, Debate.Status.WAITING)
        assert not Event.objects.filter(debate=debate, kind="USER").exists()


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_delete(people, who, visibility):
    debate = make_debate(people["owner"], visibility)
    response = client_for(who, people).post(reverse("debate_delete", args=[debate.pk]))
    assert response.status_code == DELETE[who][VISIBILITIES.index(visibility)]
    assert Debate.objects.filter(pk=debate.pk).exists() == (who not in ("owner", "staff"))


def test_actions_refuse_get(people):
    debate = make_debate(people["owner"], "public")
    client = client_for("owner", people)
    for action in ("debate_end", "debate_speak", "debate_retry", "debate_delete", "debate_visibility"):
        assert client.get(reverse(action, args=[debate.pk])).status_code == 405


def test_forms_need_the_csrf_token(people):
    debate = make_debate(people["owner"], "public", status=Debate.Status.WAITING)
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["owner"])
    assert client.post(reverse("debate_end", args=[debate.pk])).status_code == 403
    assert client.post(reverse("debate_new"), {"topic": "x"}).status_code == 403


def test_starting_a_debate_needs_a_login(people, llm_server, runner_idle):
    import_personas(
        [("a.yaml", PERSONA.format(n="Ann", r="debater")), ("b.yaml", PERSONA.format(n="Ben", r="debater"))]
    )
    anonymous = Client().post(reverse("debate_new"), {"format": "duel", "topic": "x"})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert not Debate.objects.exists()


async def ws_status(path, user=None):
    application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
    communicator = WebsocketCommunicator(application, path)
    if user is not None:
        communicator.scope["user"] = user
    connected, code = await communicator.connect()
    first = await communicator.receive_from() if connected else ""
    await communicator.disconnect()
    return connected, code, first


WS = {
    "anonymous": (False, False, True),
    "other": (False, False, True),
    "owner": (True, True, True),
    "staff": (True, True, True),
}
WS_SHARE = {who: (False, True, True) for who in WHO}


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_websockets_follow_the_same_rules(people, who, visibility):
    from django.contrib.auth.models import AnonymousUser

    debate = make_debate(people["owner"], visibility)
    user = AnonymousUser() if who == "anonymous" else people[who]
    index = VISIBILITIES.index(visibility)
    connected, code, first = asyncio.run(ws_status(f"/ws/debates/{debate.pk}/?since=0", user))
    assert connected == WS[who][index]
    if connected:
        assert 'id="ev-0"' in first  # the catch-up: every card after `since`
    else:
        assert code == 4403
    connected, _, _ = asyncio.run(ws_status(f"/ws/share/{debate.share_token}/?since=0", user))
    assert connected == WS_SHARE[who][index]


def test_the_catch_up_sends_only_what_the_page_missed(people):
    debate = make_debate(people["owner"], "public")
    later = Event.objects.create(debate=debate, ordinal=1, kind="SYSTEM", content="[SYSTEM]: Next speaker: Ada.")
    _, _, first = asyncio.run(ws_status(f"/ws/debates/{debate.pk}/?since={later.pk - 1}", people["owner"]))
    assert 'id="ev-1"' in first and 'id="ev-0"' not in first


def seed_events(debate, count):
    seat = debate.seats.get(key="p1")
    Event.objects.bulk_create(
        [
            Event(
                debate=debate,
                seat=seat if i % 2 else None,
                ordinal=i + 1,
                kind="TURN" if i % 2 else "SYSTEM",
                content=f"Statement {i} with **markdown**.",
                tokens_in=10,
                tokens_out=5,
            )
            for i in range(count)
        ]
    )


def test_the_debate_page_makes_the_same_number_of_queries_for_10_and_500_events(people):
    client = client_for("owner", people)
    counts = []
    for size in (10, 500):
        debate = make_debate(people["owner"], "private")
        seed_events(debate, size)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(reverse("debate_detail", args=[debate.pk]))
        assert response.status_code == 200
        assert response.content.decode().count('class="card') == size + 1
        counts.append(len(queries))
    assert counts[0] == counts[1]
