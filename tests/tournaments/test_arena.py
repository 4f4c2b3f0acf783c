"""The arena: a blind, redacted match from opted-in tournaments, one vote per person and match, who was who after
the vote, refusals that count nothing, and the report's human section and exports built from the votes."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from chaoslm.runner import inline
from debates.models import Debate, Event
from debates.poll_views import COOKIE
from tests.batches.helpers import always_for, debater, judge, questions, run_to_end
from tournaments import arena, services
from tournaments.models import ArenaVote, Match, Tournament

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
    first, second = names
    for event in Event.objects.filter(debate__tournament_match__tournament=tournament, kind=Event.Kind.TURN):
        me, other = (first, second) if event.seat.name == first else (second, first)
        short = other.split()[0]
        event.content = f"I am {me}. {short.upper()}'s case fails; {short.lower()} forgets test-model's limits."
        event.save(card=False)
    return tournament


def page_text(response) -> str:
    return response.content.decode()


def test_the_arena_serves_a_redacted_match_and_reveals_who_was_who_after_the_vote(people, llm_server, runner_idle):
    tournament = finished(people["owner"], llm_server)
    client = Client()
    response = client.get(reverse("arena"))
    assert response.status_code == 200
    html = page_text(response)
    for name in ("alice", "fenwick", "bob", "marlowe", "test-model", "Judge Una", tournament.name):
        assert name.lower() not in html.lower()
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


def test_one_vote_per_person_and_match_the_last_counts(people, llm_server, runner_idle):
    finished(people["owner"], llm_server)
    match = arena.matches().first()
    signed_in = Client()
    signed_in.force_login(people["other"])
    for choice in ("1", "2", "2"):
        assert signed_in.post(reverse("arena_vote", args=[match.pk]), {"choice": choice}).status_code == 302
    anonymous = Client()
    anonymous.post(reverse("arena_vote", args=[match.pk]), {"choice": "1"})
    anonymous.post(reverse("arena_vote", args=[match.pk]), {"choice": "tie"})
    assert sorted(ArenaVote.objects.values_list("voter", "choice")) == sorted(
        [(f"user:{people['other'].pk}", "2"), (ArenaVote.objects.exclude(voter__startswith="user:").get().voter, "tie")]
    )


def test_refusals_count_nothing(people, llm_server, runner_idle, settings):
    tournament = finished(people["owner"], llm_server)
    match = arena.matches().first()
    client = Client()
    # An option that does not exist.
    response = client.post(reverse("arena_vote", args=[match.pk]), {"choice": "3"})
    assert response.status_code == 400 and "Pick Debater 1, Debater 2 or a tie" in page_text(response)
    # A match not in the arena: its tournament left it, or it never was one.
    Tournament.objects.filter(pk=tournament.pk).update(arena=False)
    response = client.post(reverse("arena_vote", args=[match.pk]), {"choice": "1"})
    assert response.status_code == 404 and "not in the arena" in page_text(response)
    assert client.get(reverse("arena_match", args=[match.pk])).status_code == 404
    assert client.post(reverse("arena_vote", args=[999999]), {"choice": "1"}).status_code == 404
    assert "No match is in the arena yet" in page_text(client.get(reverse("arena")))
    Tournament.objects.filter(pk=tournament.pk).update(arena=True)
    # A match whose debate has not completed is not in the arena either.
    Debate.objects.filter(pk=match.debate_id).update(status=Debate.Status.RUNNING)
    assert client.post(reverse("arena_vote", args=[match.pk]), {"choice": "1"}).status_code == 404
    Debate.objects.filter(pk=match.debate_id).update(status=Debate.Status.COMPLETED)
    # A forged cookie: refused and cleared.
    client.cookies[COOKIE] = "anon:forged:signature"
    response = client.post(reverse("arena_vote", args=[match.pk]), {"choice": "1"})
    assert response.status_code == 400 and "could not be verified" in page_text(response)
    assert response.cookies[COOKIE].value == ""
    # A GET is not a vote.
    assert Client().get(reverse("arena_vote", args=[match.pk])).status_code == 405
    # Without the CSRF token, no vote.
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(reverse("arena_vote", args=[match.pk]), {"choice": "1"}).status_code == 403
    # Past the per-address limit (shared with the polls): 429.
    settings.CHAOSLM_POLL_VOTES_PER_MINUTE = 0
    assert Client().post(reverse("arena_vote", args=[match.pk]), {"choice": "1"}).status_code == 429
    assert not ArenaVote.objects.exists()


def test_a_tournament_not_opted_in_is_not_served(people, llm_server, runner_idle):
    finished(people["owner"], llm_server, arena_on=False)
    assert "No match is in the arena yet" in page_text(Client().get(reverse("arena")))


def test_a_vote_on_a_transcript_that_still_names_someone_is_kept_excluded_and_counted(people, llm_server, runner_idle):
    tournament = finished(people["owner"], llm_server, names=("Al", "Bob Marlowe"))
    client = Client()
    for match in arena.matches():
        html = page_text(client.get(reverse("arena_match", args=[match.pk])))
        assert "A name may remain in this transcript" in html
        client.post(reverse("arena_vote", args=[match.pk]), {"choice": "2"})
    assert list(ArenaVote.objects.values_list("excluded", flat=True)) == [True, True]
    owner = Client()
    owner.force_login(people["owner"])
    page = page_text(owner.get(reverse("tournament_detail", args=[tournament.pk])))
    assert "0 votes from 0 people on 0 matches; 2 more kept but not counted" in page


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


def test_the_form_and_the_spec_opt_in(people, llm_server, runner_idle, tmp_path):
    llm_server.configure(rules=always_for(["Ann Reed", "Bea Stone"]))
    ann, bea, una = debater("Ann Reed"), debater("Bea Stone"), judge("Judge Una")
    client = Client()
    client.force_login(people["owner"])
    assert 'name="arena"' in page_text(client.get(reverse("tournament_new")))
    data = {
        "name": "Form league",
        "debaters": [ann.pk, bea.pk],
        "judges": [una.pk],
        "questions": "Tea?",
        "sides": "once",
        "repeats": 1,
        "concurrency": 2,
        "visibility": "private",
        "option_turns": 2,
        "arena": "on",
    }
    assert client.post(reverse("tournament_new"), data).status_code == 302
    assert Tournament.objects.get(name="Form league").arena
    spec = tmp_path / "spec.yaml"
    body = "name: CLI league\noptions: {turns: 2}\ndebaters: [Ann Reed, Bea Stone]\njudges: [Judge Una]\n"
    spec.write_text(body + 'questions: ["Tea?"]\nsides: once\narena: true\n')
    out = io.StringIO()
    call_command("tournament", "run", str(spec), "--json", stdout=out)
    assert json.loads(out.getvalue())["tournament"]["arena"] is True
    assert Tournament.objects.get(name="CLI league").arena
    spec.write_text(body + 'questions: ["Tea?"]\narena: maybe\n')
    with pytest.raises(CommandError, match="arena: true or false"):
        call_command("tournament", "run", str(spec), stdout=io.StringIO())
