"""The tournament page's matches table is live: a socket gets its page's rows on joining, then each push carries
the rows whose debates changed lately, drawn by the same partial as the page (tournaments/broadcast.py)."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from debates.models import Debate
from tests.tournaments.test_web import make_tournament
from tournaments import broadcast
from tournaments.models import Match
from tournaments.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)

SWAP = '<div hx-swap-oob="replace:#match-pushes"><template>'


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("olive", password="pw-olive-123")


def rows(html):
    """The match rows in `html`, by id."""
    return dict(re.findall(r'(?s)<tr id="(match-\d+)">(.*?)</tr>', html))


def pushed_rows(html):
    assert html.count(SWAP) <= 1
    return rows(html.partition(SWAP)[2])


async def joined(tournament, page):
    communicator = WebsocketCommunicator(
        AuthMiddlewareStack(URLRouter(websocket_urlpatterns)),
        f"/ws/tournament-share/{tournament.share_token}/?page={page}",
    )
    assert (await communicator.connect())[0]
    return communicator, await communicator.receive_from()


def finish_duel(match, winner=""):
    match.debate = Debate.objects.create(
        topic=match.question.topic, format="duel", owner=match.tournament.owner, status="completed", winner=winner
    )
    match.save(update_fields=["debate"])
    return match.debate


def test_a_socket_joining_gets_the_rows_of_its_page(owner):
    tournament = make_tournament(owner, "unlisted", topics=[f"Question {i}?" for i in range(26)])  # 52 matches
    assert Match.objects.filter(tournament=tournament).count() == 52

    async def run(page):
        communicator, first = await joined(tournament, page)
        await communicator.disconnect()
        return first

    last_two = [f"match-{m.order + 1}" for m in Match.objects.filter(tournament=tournament).order_by("order")[50:]]
    assert sorted(pushed_rows(asyncio.run(run(2)))) == sorted(last_two)
    assert len(pushed_rows(asyncio.run(run(1)))) == broadcast.MATCHES_PER_PAGE
    assert len(pushed_rows(asyncio.run(run("junk")))) == broadcast.MATCHES_PER_PAGE  # not a page: the first


def test_a_push_carries_the_rows_that_changed_as_the_page_draws_them(owner):
    tournament = make_tournament(owner, "unlisted", topics=["Tea?", "Cars?"])  # four matches
    first, second, third = Match.objects.filter(tournament=tournament).order_by("order")[:3]
    finish_duel(second)
    Debate.objects.filter(pk=second.debate_id).update(updated_at=timezone.now() - timedelta(hours=1))

    async def run():
        communicator, _ = await joined(tournament, 1)
        duel = await sync_to_async(finish_duel)(first)
        await sync_to_async(broadcast.push)(tournament.pk)
        pushed = await communicator.receive_from()
        await communicator.disconnect()
        return duel, pushed

    duel, pushed = asyncio.run(run())
    # The first match's duel just finished; the second's an hour ago (its row went out then); the others have
    # none.
    row, untouched = f"match-{first.order + 1}", f"match-{third.order + 1}"
    assert list(pushed_rows(pushed)) == [row]
    assert f'<a href="/debates/{duel.pk}/">completed</a>' in pushed_rows(pushed)[row]
    page = Client().get(reverse("tournament_share", args=[tournament.share_token])).content.decode()
    assert pushed_rows(pushed)[row] == rows(page)[row]  # one partial draws both
    assert "not started" in rows(page)[untouched]


def test_a_tournament_no_page_shows_is_not_drawn_for_pushes(owner, monkeypatch):
    tournament = make_tournament(owner, "unlisted")
    drawn: list[str] = []
    real = broadcast.render_to_string
    monkeypatch.setattr(broadcast, "render_to_string", lambda name, *a, **k: drawn.append(name) or real(name, *a, **k))
    assert broadcast.live_html_of(tournament.pk) == "" and drawn == []

    async def watched():
        communicator, _ = await joined(tournament, 1)
        drawn.clear()
        html = await sync_to_async(broadcast.live_html_of)(tournament.pk)
        await communicator.disconnect()
        return html

    assert 'id="leaderboard"' in asyncio.run(watched()) and drawn
