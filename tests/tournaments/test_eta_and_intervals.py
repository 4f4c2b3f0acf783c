"""What a running tournament tells about its time left, and a rating whose interval is not known yet (issue 37,
item 11): the ETA says what it stands on before any debate has finished, runs down between calls and says when
the tournament is late instead of showing a time already overtaken; a rating from one match's verdict shows no
zero-width interval, on the page, in the exports, in the command line's report and in the API."""

import csv
import io
import json
import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from api.models import ApiToken, new_raw_token, token_digest
from batches.stats import NEEDS_MORE
from debates.models import Debate, Event
from tests.batches.helpers import debater, judge, questions
from tournaments import services, state
from tournaments.models import Judgment, Match, Tournament

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("olive", password="pw-olive-123")


@pytest.fixture
def client(owner):
    client = Client()
    client.force_login(owner)
    return client


def bearer(owner) -> dict[str, str]:
    raw = new_raw_token()
    ApiToken.objects.create(user=owner, name="t", read_only=True, digest=token_digest(raw), prefix=raw[:12])
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def league(owner) -> Tournament:
    """Two duels of two turns (Alice-Bob, Bob-Alice): 14 calls each, 28 in all; both made, none started."""
    tournament = services.create_tournament(
        name="League",
        debaters=[services.Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[services.Contestant.of(judge("Judge Una"))],
        questions=questions(1),
        options={"turns": 2},
        sides="both",
        owner=owner,
    )
    services.TOURNAMENT.advance(tournament.pk, start=lambda debate_id: None)
    return tournament


def started(tournament: Tournament, seconds_ago: float) -> Debate:
    first = Match.objects.filter(tournament=tournament).order_by("order").first().debate
    Debate.objects.filter(pk=first.pk).update(
        status="running", started_at=timezone.now() - timedelta(seconds=seconds_ago)
    )
    return first


def calls(debate: Debate, count: int, seconds_ago: float) -> None:
    """`count` model calls of `debate`, the last `seconds_ago`."""
    at = timezone.now() - timedelta(seconds=seconds_ago)
    Event.objects.bulk_create([Event(debate=debate, ordinal=i + 1, kind="TURN", content="x") for i in range(count)])
    Event.objects.filter(debate=debate).update(created_at=at)


def seconds(text: str) -> int:
    """A duration as the page writes it ("2 min 5 s") in seconds: the page is drawn a moment after the state."""
    minutes, secs = re.fullmatch(r"(?:(\d+) min )?(\d+) s", text).groups()
    return int(minutes or 0) * 60 + int(secs)


def progress_line(client, tournament) -> str:
    html = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    line = html.split('<p class="progress-line">')[1].split("</p>")[0]
    return " ".join(re.sub(r"<[^>]+>", "", line).split())


def test_before_its_first_call_the_eta_says_it_is_estimating_and_for_how_long(owner, client):
    tournament = league(owner)
    started(tournament, 125)
    line = progress_line(client, tournament)
    shown = re.fullmatch(
        r"Running · 0 done · 2 running · 0 failed · of 2 debates · estimating: no model call has finished yet, (.+) in",
        line,
    )
    assert shown and 125 <= seconds(shown[1]) < 140, line
    assert state.progress(tournament).eta_seconds is None


def test_before_a_debate_finishes_the_eta_says_what_it_stands_on_and_runs_down(owner, client):
    tournament = league(owner)
    # 7 calls in the first 70 s (10 s a call), the last 30 s ago: 21 calls left, 210 s from then, 180 s from now.
    calls(started(tournament, 100), 7, seconds_ago=30)
    progress = state.progress(tournament)
    assert progress.eta_seconds == pytest.approx(180, abs=2) and not progress.overdue
    line = progress_line(client, tournament)
    shown = re.search(
        r"of 2 debates · about (.+) left \(estimated from 7 of 28 model calls; no debate has finished yet\)$", line
    )
    assert shown and 165 < seconds(shown[1]) <= 180, line
    html = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    span = re.search(r'<span class="eta" data-eta-seconds="(\d+)" data-overdue="([^"]+)">', html)
    assert span and int(span[1]) == pytest.approx(180, abs=2)
    assert re.fullmatch(r"taking longer than estimated: 7 of 28 model calls made in 1 min 4\d s", span[2])


def test_once_its_time_has_passed_the_eta_says_it_is_taking_longer(owner, client):
    tournament = league(owner)
    # 7 calls in the first 100 s, the last 1,100 s ago: their pace said it would end 800 s ago. Nothing since.
    calls(started(tournament, 1200), 7, seconds_ago=1100)
    progress = state.progress(tournament)
    assert progress.overdue and progress.eta_seconds is None
    line = progress_line(client, tournament)
    assert re.search(r"of 2 debates · taking longer than estimated: 7 of 28 model calls made in 20 min \d+ s$", line)
    response = client.get(f"/api/v1/tournaments/{tournament.pk}", **bearer(owner))
    assert response.status_code == 200
    shown = response.json()["progress"]
    assert (shown["eta_seconds"], shown["overdue"]) == (None, True)
    assert re.fullmatch(r"taking longer than estimated: 7 of 28 model calls made in 20 min \d+ s", shown["eta_text"])


# -- a rating from one verdict ------------------------------------------------------------------------------------


def one_verdict(owner) -> Tournament:
    """One question, once: one duel, Alice FOR beating Bob, named by its one judge."""
    tournament = services.create_tournament(
        name="Short",
        debaters=[services.Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[services.Contestant.of(judge("Judge Una"))],
        questions=questions(1),
        options={"turns": 2},
        sides="once",
        owner=owner,
    )
    (match,) = Match.objects.filter(tournament=tournament)
    debate = Debate.objects.create(topic="x", format="duel", in_batch=True, status="completed", winner="Alice")
    Match.objects.filter(pk=match.pk).update(debate=debate)
    Judgment.objects.filter(match=match).update(debate=debate)
    Tournament.objects.filter(pk=tournament.pk).update(status="completed")
    return Tournament.objects.get(pk=tournament.pk)


def test_a_rating_from_one_verdict_has_no_interval_anywhere(owner, client):
    tournament = one_verdict(owner)
    html = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    board = html.split('<section id="leaderboard"')[1].split("</section>")[0]
    title = NEEDS_MORE[0].upper() + NEEDS_MORE[1:]
    rows = re.findall(r'<td class="name">(\w+)</td><td>([-\d.]+)</td><td title="([^"]+)">([^<]+)</td>', board)
    assert [(name, why, shown) for name, _, why, shown in rows] == [
        ("Alice", title, "needs more verdicts"),
        ("Bob", title, "needs more verdicts"),
    ]
    assert not re.search(r"(-?\d\.\d\d) \u2013 \1", board)  # no zero-width pair

    ratings = client.get(reverse("tournament_export", args=[tournament.pk, "ratings.csv"])).content.decode()
    table = list(csv.DictReader(io.StringIO(ratings)))
    assert [(r["name"], r["ci_low"], r["ci_high"]) for r in table] == [("Alice", "", ""), ("Bob", "", "")]
    assert all(r["rating"] for r in table)

    report = client.get(f"/api/v1/tournaments/{tournament.pk}/report", **bearer(owner)).json()
    shown = {r["name"]: (r["ci_low"], r["ci_high"], r["why"]) for r in report["ratings"]}
    assert shown == {"Alice": (None, None, NEEDS_MORE), "Bob": (None, None, NEEDS_MORE)}
    assert all(isinstance(r["rating"], float) for r in report["ratings"])

    out = io.StringIO()
    call_command("tournament", "report", str(tournament.pk), stdout=out)
    assert "needs more verdicts" in out.getvalue() and "— to —" not in out.getvalue()
    json_out = io.StringIO()
    call_command("tournament", "report", str(tournament.pk), "--json", stdout=json_out)
    assert all(r["ci_low"] is None for r in json.loads(json_out.getvalue())["ratings"])
