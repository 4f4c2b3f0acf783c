"""A tournament of a card whose referees decide: the panel's judges sit in the card's referee seats, each names a
side (`answer: side`), and the card's decision over their answers is the match's one verdict. The ratings count it
once; each referee's own vote counts in that judge's figures and the panel's agreement; the matches table, its CSV
and the JSON report (the API's) show the decision, its split and each vote."""

from __future__ import annotations

import csv
import io
import json
from itertools import permutations

import pytest
from django.test import Client
from django.urls import reverse

from batches.checks import Contestant
from chaoslm.runner import inline
from debates import format_cards
from debates.models import Debate, Event
from tests.batches.helpers import always_for, debater, judge, questions, run_to_end
from tournaments import results, services
from tournaments.models import Judgment, Match

pytestmark = pytest.mark.django_db(transaction=True)

PANEL = """\
name: referee-duel
title: Referee duel
description: Two debaters argue in turn; three referees each name the winner at once, and a majority decides.
options:
  turns: {label: Speeches, default: 2, min: 2, max: 6}
sides:
  - {key: for, label: Proposition, stance: for}
  - {key: against, label: Opposition, stance: against}
seats:
  - {key: a, role: debater, label: Proposition, side: for}
  - {key: b, role: debater, label: Opposition, side: against}
  - {key: referee_1, role: judge, label: Referee 1}
  - {key: referee_2, role: judge, label: Referee 2}
  - {key: referee_3, role: judge, label: Referee 3, required: false}
stages:
  - repeat: turns
    stages:
      - {speech: argument, seat: [a, b], prompt: "Argue your side of: {topic}"}
  - speech: ballot
    seat: [referee_1, referee_2, referee_3]
    at_once: true
    sees: all
    answer: side
    prompt: "You are {speaker}, a referee. Who argued better, {a} or {b}? {answer_format}"
decision: {rule: majority, step: ballot}
"""

DEBATERS = ("Alice", "Bob", "Cy")
REFEREES = ("Judge Una", "Judge Vic", "Judge Wes")


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def ballots() -> list[dict[str, str]]:
    """Una and Vic name Alice whenever she debates, else the FOR side; Wes names the AGAINST side every time."""
    rules = []
    for first, second in permutations(DEBATERS, 2):
        for referee in REFEREES:
            alice_or_for = "Alice" if "Alice" in (first, second) else first
            named = second if referee == "Judge Wes" else alice_or_for
            rules.append(
                {
                    "match": f"You are {referee}, a referee. Who argued better, {first} or {second}\\?",
                    "reply": json.dumps({"reasoning": f"{named} was clearer.", "answer": named}),
                }
            )
    return rules


def make(judges=REFEREES, repeats=1, owner=None, check=False):
    make_it = services.check_tournament if check else services.create_tournament
    return make_it(
        name="Referee cup",
        debaters=[Contestant.of(debater(n)) for n in DEBATERS],
        judges=[Contestant.of(judge(n)) for n in judges],
        questions=questions(1),
        sides="once",
        repeats=repeats,
        formats=["referee-duel"],
        owner=owner,
    )


def owner_client(people) -> Client:
    client = Client()
    client.force_login(people["owner"])
    return client


def test_a_refereed_card_counts_each_matchs_decision_once_and_each_referees_vote_for_that_judge(
    people, llm_server, runner_idle
):
    llm_server.configure(rules=ballots())
    format_cards.save_card(PANEL, owner=None)
    # Every judge sits in a referee's seat: two to three judges, one repeat, and no replay.
    for judges, repeats in ((REFEREES[:1], 1), (REFEREES, 2)):
        with pytest.raises(services.TournamentError) as refused:
            make(judges=judges, repeats=repeats)
        assert str(refused.value) == (
            "A referee-duel debate is decided by its referees inside it, one judge a referee's seat: give 2 to 3 "
            "judges and one repeat."
        )
    # Three matches (three debaters, sides once), each one argument a side and three ballots.
    size = make(check=True).size
    assert (size.matches, size.replays, size.calls) == (3, 0, 15)
    # The form offers it, saying how it is judged, and estimates it so.
    owner = owner_client(people)
    form = owner.get(reverse("tournament_new")).content.decode()
    assert "decided inside it by 3 referees, the judges, as one verdict" in form
    personas = [debater(n) for n in DEBATERS] + [judge(n) for n in REFEREES]
    data = {
        "name": "Form cup",
        "debaters": [p.pk for p in personas[:3]],
        "judges": [p.pk for p in personas[3:]],
        "questions": "Should cities ban cars?",
        "sides": "once",
        "repeats": 1,
        "concurrency": 2,
        "visibility": "private",
        "formats": ["referee-duel"],
    }
    estimate = owner.post(reverse("tournament_estimate"), data).content.decode()
    assert "3 referee-duel debates and 0 judge replays: 3 debates, 15 LLM calls." in estimate
    tournament = make(owner=people["owner"])
    # One judgment a match, its first referee's, inside the debate.
    assert [(j.judge.name, j.in_debate) for j in Judgment.objects.select_related("judge")] == [("Judge Una", True)] * 3

    finished = run_to_end(tournament)
    assert finished.status == "completed"
    assert Debate.objects.count() == 3  # the matches' debates: no replay
    pairs = [(m.debater_for.name, m.debater_against.name) for m in Match.objects.order_by("order")]
    assert pairs == [("Alice", "Bob"), ("Cy", "Alice"), ("Bob", "Cy")]
    first = Match.objects.select_related("debate").get(order=0)
    seats = dict(first.debate.seats.values_list("key", "name"))
    assert seats == {
        "a": "Alice",
        "b": "Bob",
        "referee_1": "Judge Una",
        "referee_2": "Judge Vic",
        "referee_3": "Judge Wes",
    }
    # Each referee was asked for a side by name, as JSON.
    ballot = Event.objects.get(debate=first.debate, seat__key="referee_3", step="ballot")
    assert ballot.prompt.endswith(
        "You are Judge Wes, a referee. Who argued better, Alice or Bob? Reply with JSON only: "
        '{"reasoning": "your reasoning", "answer": one of "Alice", "Bob"}'
    )
    assert (first.debate.winner, first.debate.premise_upheld) == ("Alice", True)

    # The match's own page: the decision with its split, and the winner it names.
    debate_page = owner.get(reverse("debate_detail", args=[first.debate.pk])).content.decode()
    assert (
        'Answer: <strong>Alice</strong> <span class="muted">(majority vote: 2 of 3 votes, more than half)</span></p>\n'
        '    <ul class="split"><li>Alice: 2</li><li>Bob: 1</li></ul>'
    ) in debate_page
    assert "Winner: <strong>Alice</strong>" in debate_page and "Premise upheld" in debate_page

    # One verdict a match: the referees' decision, with each referee's vote beside it.
    verdicts = results.verdicts(finished)
    assert [(v.debater_for, v.debater_against, v.judge, v.winner) for v in verdicts] == [
        ("Alice", "Bob", "Judge Una", "for"),
        ("Cy", "Alice", "Judge Una", "against"),
        ("Bob", "Cy", "Judge Una", "for"),
    ]
    assert [[(b.judge, b.winner) for b in v.ballots] for v in verdicts] == [
        [("Judge Una", "for"), ("Judge Vic", "for"), ("Judge Wes", "against")],
        [("Judge Una", "against"), ("Judge Vic", "against"), ("Judge Wes", "against")],
        [("Judge Una", "for"), ("Judge Vic", "for"), ("Judge Wes", "against")],
    ]

    report = results.report(finished)
    # The leaderboard counts three verdicts, not nine (nor none).
    assert (report.verdicts, report.matches) == (3, 3)
    assert [(r.name, r.wins, r.losses) for r in report.ratings] == [("Alice", 2, 0), ("Bob", 1, 1), ("Cy", 0, 2)]
    assert report.head_to_head["Alice"] == {"Alice": 0, "Bob": 1, "Cy": 1}
    assert report.head_to_head["Bob"] == {"Alice": 0, "Bob": 0, "Cy": 1}
    # Each judge's figures read that referee's own votes: three each; Wes named AGAINST every time.
    figures = {j.name: j for j in report.judges}
    assert {name: j.verdicts for name, j in figures.items()} == dict.fromkeys(REFEREES, 3)
    assert figures["Judge Una"].for_win_rate.value == pytest.approx(2 / 3)
    assert figures["Judge Wes"].for_win_rate.value == 0.0
    assert report.panel.method == "fleiss"

    # The page's matches table: the decision, its rule and reason, and each referee's vote.
    page = owner.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    row = page[page.index('<tr id="match-1">') :]
    row = row[: row.index("</tr>")]
    assert (
        f'<a href="{reverse("debate_detail", args=[first.debate.pk])}">Referees: for</a> <span class="referees">'
        "(majority vote, 2 of 3 votes, more than half: Judge Una for, Judge Vic for, Judge Wes against)</span>"
    ) in row
    assert "Judge Una: " not in row  # the panel's verdict, not one judge's
    second = page[page.index('<tr id="match-2">') :]
    assert "Referees: against</a>" in second[: second.index("</tr>")]

    # The CSV export: one row a match, with the decision and the votes.
    rows = list(
        csv.reader(
            io.StringIO(owner.get(reverse("tournament_export", args=[tournament.pk, "matches.csv"])).content.decode())
        )
    )
    assert rows[0][-3:] == ["contradicts", "decision", "referees"] and len(rows) == 1 + 3
    assert rows[1][7:12] == ["Judge Una", "0", str(first.debate.pk), "completed", "for"]
    assert rows[1][-2:] == [
        "majority vote: 2 of 3 votes, more than half",
        "Judge Una: for; Judge Vic: for; Judge Wes: against",
    ]
    assert rows[2][-2:] == [
        "majority vote: 3 of 3 votes, more than half",
        "Judge Una: against; Judge Vic: against; Judge Wes: against",
    ]
    # The JSON report (the API's too): the decision with its split, and each vote.
    exported = json.loads(owner.get(reverse("tournament_export", args=[tournament.pk, "report.json"])).content)
    (judgment,) = exported["matches"][0]["judgments"]
    assert {k: judgment["decision"][k] for k in ("rule", "answer", "split", "voters")} == {
        "rule": "majority",
        "answer": "Alice",
        "split": [["Alice", 2.0], ["Bob", 1.0]],
        "voters": 3,
    }
    assert judgment["referees"] == [
        {"judge": "Judge Una", "winner": "for", "answer": "Alice"},
        {"judge": "Judge Vic", "winner": "for", "answer": "Alice"},
        {"judge": "Judge Wes", "winner": "against", "answer": "Bob"},
    ]
    assert (exported["verdicts"], exported["matches_rated"]) == (3, 3)


def test_beside_a_duel_the_refereed_match_is_one_verdict_and_the_duels_judges_three(llm_server, runner_idle):
    llm_server.configure(rules=[*always_for(["Alice", "Bob"]), *ballots()])
    format_cards.save_card(PANEL, owner=None)
    tournament = services.create_tournament(
        name="Mixed cup",
        debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[Contestant.of(judge(n)) for n in REFEREES],
        questions=questions(1),
        sides="once",
        formats=["duel", "referee-duel"],
    )
    # The duel: its judge inside and two replays; the refereed match: one judgment, inside.
    assert sorted(Judgment.objects.values_list("match__format", "judge__name", "in_debate")) == [
        ("duel", "Judge Una", True),
        ("duel", "Judge Vic", False),
        ("duel", "Judge Wes", False),
        ("referee-duel", "Judge Una", True),
    ]
    finished = run_to_end(tournament)
    assert finished.status == "completed"
    report = results.report(finished)
    # Alice argued FOR in both: three duel verdicts for her, and the referees' 2-1 decision once.
    assert (report.verdicts, report.matches) == (4, 2)
    assert [(r.name, r.wins, r.losses) for r in report.ratings] == [("Alice", 4, 0), ("Bob", 0, 4)]
    assert [(f.name, f.matches, f.verdicts) for f in report.formats] == [("duel", 1, 3), ("referee-duel", 1, 1)]
    # Each judge: its duel verdict and its own ballot; Wes named Bob (AGAINST) as a referee.
    figures = {j.name: j for j in report.judges}
    assert {name: j.verdicts for name, j in figures.items()} == dict.fromkeys(REFEREES, 2)
    assert (figures["Judge Una"].for_win_rate.value, figures["Judge Wes"].for_win_rate.value) == (1.0, 0.5)
