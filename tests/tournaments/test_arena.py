"""The arena: a blind, redacted match from opted-in tournaments, who was who after the vote, and the report's human
section and exports built from the votes (tests/batches/test_arena.py has what every arena does alike: one vote per
person, the refusals)."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from audience.poll_views import COOKIE
from chaoslm.runner import inline
from debates.models import Event
from tests.batches.helpers import always_for, debater, judge, name_each_other, questions, run_to_end
from tournaments import arena, services
from tournaments.models import ArenaVote, Match

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def finished(owner, llm_server, names=("Alice Fenwick", "Bob Marlowe"), arena_on=True, visibility="private"):
    """A finished two-match tournament (one question, each pair on both sides) whose debaters name themselves and
    each other in every turn, in the ways a redaction must catch."""
    llm_server.configure(rules=always_for(names))
    tournament = services.create_tournament(
        name="League",
        debaters=[services.Contestant.of(debater(n)) for n in names],
        judges=[services.Contestant.of(judge("Judge Una"))],
        questions=questions(1),
        options={"turns": 2},
        owner=owner,
        visibility=visibility,
        arena=arena_on,
    )
    run_to_end(tournament)
    name_each_other(Event.objects.filter(debate__tournament_match__tournament=tournament, kind=Event.Kind.TURN), names)
    return tournament


def page_text(response) -> str:
    return response.content.decode()


def test_the_arena_serves_a_redacted_match_and_reveals_who_was_who_after_the_vote(people, llm_server, runner_idle):
    tournament = finished(people["owner"], llm_server)
    client = Client()
    response = client.get(reverse("arena"))
    assert response.status_code == 200
    html = page_text(response)
    # The CSRF tokens are random letters: now and then they spell "bob".
    shown = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"|"X-CSRFToken": "[^"]*"', "", html)
    for name in ("alice", "fenwick", "bob", "marlowe", "test-model", "Judge Una", tournament.name):
        assert name.lower() not in shown.lower()
    turns = re.findall(r'<div class="md"><p>(.*?)</p>', html)
    # "BOB's", "bob", "test-model's": case changes, possessives, the model's name.
    assert sorted(turns) == [
        "I am Debater 1. Debater 2's case fails; Debater 2 forgets [a model]'s limits.",
        "I am Debater 2. Debater 1's case fails; Debater 1 forgets [a model]'s limits.",
    ]
    assert "Who argued better?" in html and 'name="csrfmiddlewaretoken"' in html
    served = int(re.search(r"/arena/(\d+)/vote/", html).group(1))

    response = client.post(reverse("arena_vote", args=[served]), {"choice": "1"})
    assert response.status_code == 302 and response["Location"] == reverse("arena_match", args=[served])
    assert COOKIE in response.cookies
    revealed = page_text(client.get(response["Location"]))
    match = Match.objects.get(pk=served)
    assert f"<dt>Debater 1</dt><dd><strong>{match.debater_for.name}</strong>" in revealed
    assert f"<dt>Debater 2</dt><dd><strong>{match.debater_against.name}</strong>" in revealed
    assert "You picked <strong>Debater 1</strong>" in revealed and "Next match" in revealed
    assert ArenaVote.objects.get().choice == "1" and not ArenaVote.objects.get().excluded

    # The next match is the other one; after both, none is left.
    other = page_text(client.get(reverse("arena")))
    following = int(re.search(r"/arena/(\d+)/vote/", other).group(1))
    assert following != served
    client.post(reverse("arena_vote", args=[following]), {"choice": "tie"})
    assert "You have voted on every match in the arena" in page_text(client.get(reverse("arena")))
    # A stranger who has not voted sees the match blind, even at its own address.
    assert match.debater_for.name not in page_text(Client().get(reverse("arena_match", args=[served])))


def test_the_report_gains_a_human_section_and_its_exports(people, llm_server, runner_idle):
    tournament = finished(people["owner"], llm_server, visibility="public")
    voters = [Client() for _ in range(3)]
    for match in arena.matches():
        for voter, choice in zip(voters, ("1", "1", "2"), strict=True):
            voter.post(reverse("arena_vote", args=[match.pk]), {"choice": choice})
    page = page_text(Client().get(reverse("tournament_detail", args=[tournament.pk])))
    assert "The audience (arena votes)" in page
    assert "6 votes from 3 people on 2 matches." in page
    assert "The LLM judges against the human majority" in page
    data = json.loads(Client().get(reverse("tournament_export", args=[tournament.pk, "report.json"])).content)
    human = data["human"]
    assert (human["votes"], human["voters"], human["matches"], human["excluded"]) == (6, 3, 2, 0)
    # The judge always picks FOR, and so does each match's majority: it agrees on both.
    (judge_row,) = human["judges"]
    assert (judge_row["name"], judge_row["matches"], judge_row["agreed"]) == ("Judge Una", 2, 2)
    assert {r["name"] for r in human["ratings"]} == {"Alice Fenwick", "Bob Marlowe"}
    assert "voter" not in json.dumps(human).replace('"voters"', "")
    rows = list(
        csv.reader(
            io.StringIO(
                Client().get(reverse("tournament_export", args=[tournament.pk, "human_judges.csv"])).content.decode()
            )
        )
    )
    assert rows[0][:3] == ["judge", "matches_compared", "agreed"] and rows[1][:3] == ["Judge Una", "2", "2"]
    ratings = list(
        csv.reader(
            io.StringIO(
                Client().get(reverse("tournament_export", args=[tournament.pk, "human_ratings.csv"])).content.decode()
            )
        )
    )
    assert ratings[0] == ["rank", "name", "rating", "ci_low", "ci_high", "wins", "losses"] and len(ratings) == 3
