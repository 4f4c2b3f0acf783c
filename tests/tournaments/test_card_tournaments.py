"""A tournament runs any protocol card with two sides, as it runs a built-in format: its matches are the card's
debates (their YAML snapshotted), its first judge sits in the card's judge seat, and its other judges replay the
card's public statements through the judge replay of any two sides. A card that ranks more teams seats one entrant a
team, and its ranking counts as the pairwise results it implies."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from batches.checks import Contestant
from chaoslm.runner import inline
from debates import format_cards
from debates.formats.duel import EVALUATE
from debates.models import Event
from tests.batches.helpers import always_for, debater, judge, questions, run_to_end
from tournaments import design, results, services
from tournaments.models import Entrant, Judgment, Match, Tournament

pytestmark = pytest.mark.django_db(transaction=True)

CARD = (Path(__file__).resolve().parents[2] / "cards" / "lincoln-douglas.yaml").read_text()
BRITISH = (Path(__file__).resolve().parents[2] / "cards" / "british-parliamentary.yaml").read_text()


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def make(formats, owner=None, judges=("Judge Una", "Judge Vic"), debaters=("Alice", "Bob"), options=None):
    return services.create_tournament(
        name="Card cup",
        debaters=[Contestant.of(debater(n)) for n in debaters],
        judges=[Contestant.of(judge(n)) for n in judges],
        questions=questions(1),
        options={"questions": 1} if options is None else options,
        sides="once",
        formats=formats,
        owner=owner,
    )


def test_a_lincoln_douglas_card_tournament_with_a_two_judge_panel(llm_server, runner_idle):
    llm_server.configure(rules=always_for(["Alice", "Bob"]))
    card = format_cards.save_card(CARD, owner=None)
    tournament = make(["lincoln-douglas"])
    assert tournament.cards == {"lincoln-douglas": CARD}
    format_cards.save_card(CARD.replace("title: Lincoln", "title: Renamed"), owner=None, card=card)  # runs nothing new

    finished = run_to_end(tournament)
    assert finished.status == "completed"
    match = Match.objects.select_related("debate").get()
    debate = match.debate
    assert (debate.format, debate.card_source, debate.status) == ("lincoln-douglas", CARD, "completed")
    assert sorted(debate.seats.values_list("key", "name")) == [("aff", "Alice"), ("judge", "Judge Una"), ("neg", "Bob")]
    inside, replay = Judgment.objects.select_related("debate").order_by("judge__order")
    assert inside.in_debate and inside.debate_id == debate.pk
    # The other judge reads the card's public statements, in the order spoken, with the duel's judge prompts.
    assert replay.debate.format == "sides_judge" and replay.debate.options["source_format"] == "lincoln-douglas"
    spoken = Event.objects.filter(debate=debate, kind="TURN", seat__side__gt="").order_by("ordinal")
    evaluated = list(replay.debate.events.filter(step="evaluate").order_by("ordinal").values_list("prompt", flat=True))
    assert evaluated == [EVALUATE.format(name=e.seat.name, statement=e.content) for e in spoken]
    assert len(evaluated) == debate.fmt.statements({"questions": 1})
    verdicts = results.verdicts(finished)
    assert [(v.judge, v.winner, v.format) for v in verdicts] == [
        ("Judge Una", "for", "lincoln-douglas"),
        ("Judge Vic", "for", "lincoln-douglas"),
    ]


def test_a_card_is_offered_only_to_whom_may_use_it(django_user_model):
    carol = django_user_model.objects.create_user("carol")
    format_cards.save_card(CARD, owner=carol)
    assert "lincoln-douglas" in services.offered_formats(carol)
    assert "lincoln-douglas" not in services.offered_formats(None)
    builtins = re.escape(", ".join(design.formats()))  # what a tournament runs for anyone: no one's own card
    with pytest.raises(services.TournamentError, match=f"formats are one or more of {builtins}, each once"):
        make(["lincoln-douglas"])
    assert make(["lincoln-douglas"], owner=carol).cards == {"lincoln-douglas": CARD}


TEAMS = ("Opening Government", "Opening Opposition", "Closing Government", "Closing Opposition")
RANKING = ["Closing Opposition", "Opening Government", "Opening Opposition", "Closing Government"]


def test_british_parliamentary_seats_four_entrants_and_its_ranking_counts_as_six_pairwise_results(
    people, llm_server, runner_idle
):
    ballot = {"ranking": RANKING, "scores": {t: {"argument": 7, "engagement": 7, "role": 7} for t in TEAMS}}
    llm_server.configure(rules=[{"match": "Now write your ranking as a JSON object", "reply": json.dumps(ballot)}])
    format_cards.save_card(BRITISH, owner=None)
    with pytest.raises(services.TournamentError, match="judged by its one judge inside it: give one judge"):
        make(["british-parliamentary"], debaters=("Ann", "Ben", "Cy", "Di"), options={})
    four = ("Ann", "Ben", "Cy", "Di")
    tournament = make(["british-parliamentary"], people["owner"], ("Judge Una",), four, options={})
    match = Match.objects.get()
    names = dict(Entrant.objects.values_list("pk", "name"))
    assert [names[pk] for pk in match.sides] == ["Ann", "Ben", "Cy", "Di"]  # OG, OO, CG, CO

    finished = run_to_end(tournament)
    debate = Match.objects.get().debate
    assert (finished.status, debate.status) == ("completed", "completed")
    # Each entrant fills both seats of its team, under the seat's name too; the tournament's judge adjudicates.
    seats = dict(debate.seats.values_list("key", "name"))
    assert seats == {
        "pm": "Ann (Prime Minister)", "dpm": "Ann (Deputy Prime Minister)",
        "lo": "Ben (Leader of the Opposition)", "dlo": "Ben (Deputy Leader of the Opposition)",
        "mg": "Cy (Member of the Government)", "gw": "Cy (Government Whip)",
        "mo": "Di (Member of the Opposition)", "ow": "Di (Opposition Whip)",
        "judge": "Judge Una",
    }  # fmt: skip
    verdicts = results.verdicts(finished)
    # CO (Di) > OG (Ann) > OO (Ben) > CG (Cy): each pair once, the side first in the order as FOR.
    assert sorted((v.debater_for, v.debater_against, v.winner) for v in verdicts) == [
        ("Ann", "Ben", "for"),
        ("Ann", "Cy", "for"),
        ("Ann", "Di", "against"),
        ("Ben", "Cy", "for"),
        ("Ben", "Di", "against"),
        ("Cy", "Di", "against"),
    ]
    report = results.report(finished)
    assert [(r.name, r.wins, r.losses) for r in report.ratings] == [
        ("Di", 3, 0),
        ("Ann", 2, 1),
        ("Ben", 1, 2),
        ("Cy", 0, 3),
    ]

    # Its pages show every team, best first, with its seats' speakers and the pairwise results its place implies.
    owner = Client()
    owner.force_login(people["owner"])
    page = owner.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert '<th colspan="2">Teams, best first once ranked</th>' in page and "<th>FOR</th>" not in page
    row = page[page.index('<tr id="match-1">') :]
    row = row[: row.index("</tr>")]
    teams = row[row.index('<ol class="teams">') : row.index("</ol>")]
    assert teams.split("<li>")[1:] == [
        '<strong class="place">1st</strong> Closing Opposition: <strong>Di</strong> <span class="muted">(Member of the'
        ' Opposition, Opposition Whip)</span> <span class="pairs">· 3 won, 0 lost</span></li>',
        '<strong class="place">2nd</strong> Opening Government: <strong>Ann</strong> <span class="muted">(Prime '
        'Minister, Deputy Prime Minister)</span> <span class="pairs">· 2 won, 1 lost</span></li>',
        '<strong class="place">3rd</strong> Opening Opposition: <strong>Ben</strong> <span class="muted">(Leader of the'
        ' Opposition, Deputy Leader of the Opposition)</span> <span class="pairs">· 1 won, 2 lost</span></li>',
        '<strong class="place">4th</strong> Closing Government: <strong>Cy</strong> <span class="muted">(Member of the'
        ' Government, Government Whip)</span> <span class="pairs">· 0 won, 3 lost</span></li>',
    ]
    assert "Judge Una: Closing Opposition first</a>" in row
    assert "its British Parliamentary matches, which rank more teams, stay out of it." in page
    # The match's own page: the verdict ranks the four teams, each with its two speakers.
    debate_page = owner.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    ranking = debate_page[debate_page.index('<ol class="ranking">') :]
    assert ranking[: ranking.index("</ol>")].split("<li>")[1:] == [
        "<strong>1st</strong> Closing Opposition: Di (Member of the Opposition), Di (Opposition Whip)</li>",
        "<strong>2nd</strong> Opening Government: Ann (Prime Minister), Ann (Deputy Prime Minister)</li>",
        "<strong>3rd</strong> Opening Opposition: Ben (Leader of the Opposition), Ben (Deputy Leader of the"
        " Opposition)</li>",
        "<strong>4th</strong> Closing Government: Cy (Member of the Government), Cy (Government Whip)</li>",
    ]
    # Its scores are the rubric's three criteria summed, so each is out of 30, not a duel's 10.
    scores = debate_page[debate_page.index("</ol>", debate_page.index('<ol class="ranking">')) :]
    assert re.search(r"Closing Opposition <strong>\d+/30</strong>", scores), scores[:600]
    assert "/10</strong>" not in scores[: scores.index("</section>")]
    # The arena takes two-sided matches only: a four-team match is never served, and asked for, refused.
    Tournament.objects.filter(pk=tournament.pk).update(arena=True)
    assert "No match is in the arena yet" in owner.get(reverse("arena")).content.decode()
    refused = owner.get(reverse("arena_match", args=[match.pk]))
    assert refused.status_code == 404
    assert "That match ranks more than two teams, and the arena takes matches of two sides only" in (
        refused.content.decode()
    )


def form_data(personas, **extra):
    data = {
        "name": "Form cup",
        "debaters": [p.pk for p in personas[:2]],
        "judges": [personas[2].pk],
        "questions": "Should cities ban cars?",
        "sides": "once",
        "repeats": 1,
        "concurrency": 2,
        "visibility": "private",
    }
    return data | extra


def test_the_form_offers_a_users_own_card_runs_it_and_refuses_it_to_another(people, llm_server, runner_idle):
    llm_server.configure(rules=always_for(["Alice", "Bob"]))
    mine = CARD.replace("name: lincoln-douglas", "name: olives-ld").replace(
        "title: Lincoln\u2013Douglas", "title: Olive LD"
    )
    format_cards.save_card(mine, owner=people["owner"])
    format_cards.save_card(BRITISH, owner=None)  # shipped
    personas = [debater("Alice"), debater("Bob"), judge("Judge Una")]
    owner, other = Client(), Client()
    owner.force_login(people["owner"])
    other.force_login(people["other"])

    form = owner.get(reverse("tournament_new")).content.decode()
    assert 'value="olives-ld"' in form and "Olive LD: One-on-one value debate" in form
    # Every format a tournament runs: the built-ins and the cards anyone may use, a four-team ranking card too.
    assert 'value="duel"' in form and 'value="british-parliamentary"' in form
    assert "4 teams, one debater each, ranked by the one judge inside it" in form
    assert 'value="olives-ld"' not in other.get(reverse("tournament_new")).content.decode()

    data = form_data(personas, formats=["olives-ld"], option_questions=1)
    estimate = owner.post(reverse("tournament_estimate"), data).content.decode()
    # One match (two debaters, sides once) of the card at one question per cross-examination, judged inside it, no
    # replay: two preparations, two constructives, 2 x 2 cross-examination calls, three rebuttals and the judge's
    # four calls (deliberation, confirmation, JSON verdict, announcement).
    assert "1 olives-ld debate and 0 judge replays: 1 debate, 15 LLM calls." in estimate
    # Its 15 calls at the guess for a hosted model (no call timed yet), one at a time: the one debate's.
    assert (
        'It will take <strong class="duration">about 1 minute</strong> <span class="muted">(1 call at once, at a '
        "guess of 4.0 s a call for a hosted model: no call timed yet)</span>." in estimate
    )
    # A four-team card seats four debaters a match: with two, the line asks for four.
    two = owner.post(reverse("tournament_estimate"), form_data(personas, formats=["british-parliamentary"]))
    assert "Choose four or more debaters, a judge and some questions" in two.content.decode()

    refused = other.post(reverse("tournament_new"), data)
    page = refused.content.decode()
    assert (
        refused.status_code == 200 and "Select a valid choice. olives-ld is not one of the available choices." in page
    )
    assert "Should cities ban cars?" in page and not Tournament.objects.exists()

    response = owner.post(reverse("tournament_new"), data)
    tournament = Tournament.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("tournament_detail", args=[tournament.pk])
    assert (tournament.formats, tournament.cards, tournament.options) == (
        ["olives-ld"],
        {"olives-ld": mine},
        {"questions": 1},
    )
    finished = run_to_end(tournament)
    debate = Match.objects.get().debate
    assert (finished.status, debate.format, debate.card_source, debate.status) == (
        "completed",
        "olives-ld",
        mine,
        "completed",
    )
    assert [(v.judge, v.winner) for v in results.verdicts(finished)] == [("Judge Una", "for")]
