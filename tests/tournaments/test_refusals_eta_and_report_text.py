"""Tournaments as a person meets them: a one-turn duel refused everywhere, an ETA from the first calls, tables
that say there are no verdicts yet, matches counted from 1, "1 turn", a bad questions file named, and a
report whose figures that cannot be computed read "—" and say why while the terminal stays clean."""

import csv
import io
import json
import warnings
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from debates.models import Debate, Event
from tests.batches.helpers import debater, judge, questions
from tournaments import design, exports, services, state
from tournaments.models import Judgment, Match, Tournament

pytestmark = pytest.mark.django_db

TOO_FEW = "A duel needs both sides to speak: turns must be at least 2"


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("olive", password="pw-olive-123")


def make(owner=None, *, judges=("Judge Una",), n_questions=1, sides="both", turns=2):
    return services.create_tournament(
        name="League",
        debaters=[services.Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[services.Contestant.of(judge(n)) for n in judges],
        questions=questions(n_questions),
        options={"turns": turns},
        sides=sides,
        owner=owner,
    )


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def run_command(*args):
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # What an earlier test left for the collector (a socket, a loop) is reported whenever it is collected; the
        # report's own warnings are what this checks.
        warnings.simplefilter("ignore", ResourceWarning)
        call_command("tournament", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue(), [str(w.message) for w in caught]


# -- a duel of one turn -------------------------------------------------------------------------------


def test_a_one_turn_duel_is_refused_by_the_service(db):
    with pytest.raises(services.TournamentError, match=TOO_FEW):
        make(turns=1)
    assert not Tournament.objects.exists()


def test_a_one_turn_duel_is_refused_by_the_form_keeping_what_was_typed(owner):
    debaters = [debater("Alice"), debater("Bob")]
    client = Client()
    client.force_login(owner)
    data = {
        "name": "One-sided league",
        "debaters": [p.pk for p in debaters],
        "judges": [judge("Judge Una").pk],
        "questions": "Tea or coffee?",
        "sides": "both",
        "repeats": 1,
        "concurrency": 2,
        "visibility": "private",
        "option_turns": 1,
        "option_word_limit": 0,
    }
    response = client.post(reverse("tournament_new"), data)
    html = response.content.decode()
    assert response.status_code == 200 and TOO_FEW in html
    assert "One-sided league" in html and "Tea or coffee?" in html
    assert not Tournament.objects.exists()
    page = client.get(reverse("tournament_new")).content.decode()
    assert 'name="option_turns"' in page and 'min="2"' in page.split('name="option_turns"')[1].split(">")[0]


def test_a_one_turn_duel_is_refused_in_a_spec(tmp_path):
    debater("Alice"), debater("Bob"), judge("Judge Una")
    spec = write(
        tmp_path,
        "league.yaml",
        "name: L\noptions: {turns: 1}\ndebaters: [Alice, Bob]\njudges: [Judge Una]\nquestions: ['Tea?']\n",
    )
    with pytest.raises(CommandError, match=TOO_FEW):
        run_command("run", str(spec))
    assert not Tournament.objects.exists()


# -- the ETA ------------------------------------------------------------------------------------------


def _calls(debate, count, start=1):
    Event.objects.bulk_create(
        [Event(debate=debate, ordinal=start + i, kind="THINK" if i % 2 else "TURN", content="x") for i in range(count)]
        + ([Event(debate=debate, ordinal=0, kind="HEADER")] if start == 1 else [])
    )


def test_the_eta_shows_from_the_first_calls_at_their_pace(db):
    tournament = make()  # two duels (Alice-Bob, Bob-Alice) of two turns: 14 calls each, 28 in all
    services.TOURNAMENT.advance(tournament.pk, start=lambda debate_id: None)
    first, _ = [m.debate for m in Match.objects.filter(tournament=tournament).order_by("order")]
    assert design.debate_calls("duel", {"turns": 2}) == 14

    # Ten seconds in, the first duel has made 7 calls and no debate has finished: 0.7 calls a second, 21 left.
    Debate.objects.filter(pk=first.pk).update(status="running", started_at=timezone.now() - timedelta(seconds=10))
    _calls(first, 7)
    progress = state.progress(tournament)
    assert (progress.done, progress.running) == (0, 2)
    assert progress.eta_seconds == pytest.approx(30, abs=1)
    assert progress.eta_text.startswith("about 3")

    # Twenty seconds in, the first finished (14 calls) and the second made none yet: 0.7 a second, 14 left.
    Debate.objects.filter(pk=first.pk).update(
        status="completed", started_at=timezone.now() - timedelta(seconds=20), finished_at=timezone.now()
    )
    _calls(first, 7, start=8)
    assert state.progress(tournament).eta_seconds == pytest.approx(20, abs=1)


def test_no_eta_before_any_call_nor_once_done(db):
    tournament = make()
    assert state.progress(tournament).eta_seconds is None
    Tournament.objects.filter(pk=tournament.pk).update(status="completed")
    tournament.refresh_from_db()
    assert state.progress(tournament).eta_text == ""


# -- tables, numbers, words ---------------------------------------------------------------------------


def test_before_any_verdict_the_tables_say_so(owner):
    tournament = make(owner, judges=("Judge Una", "Judge Vic"))
    client = Client()
    client.force_login(owner)
    html = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    for panel in ("leaderboard", "head-to-head", "judges"):
        section = html.split(f'<section id="{panel}"')[1].split("</section>")[0]
        assert "No verdicts yet" in section, panel
        assert "undefined" not in section and "—" not in section, panel
        assert "<tr>" not in section.split("</thead>")[-1], panel
    out, _, warned = run_command("report", str(tournament.pk))
    assert "No verdicts yet" in out and "undefined" not in out and "—" not in out and warned == []


def test_matches_are_numbered_from_one_and_turns_pluralized(owner):
    tournament = make(owner)
    client = Client()
    client.force_login(owner)
    html = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert '<tr id="match-1"><td data-label="Match">1</td>' in html and 'id="match-0"' not in html
    assert "Judged duel debates (turns 2) ·" in html
    rows = list(
        csv.reader(
            io.StringIO(client.get(reverse("tournament_export", args=[tournament.pk, "matches.csv"])).content.decode())
        )
    )
    assert [row[0] for row in rows[1:]] == ["1", "2"]
    # One made before one-turn duels were refused still reads as English.
    Tournament.objects.filter(pk=tournament.pk).update(options={"turns": 1})
    html = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert "Judged duel debates (turns 1) ·" in html


def test_a_bad_row_of_a_questions_file_is_named_in_that_file(tmp_path):
    debater("Alice"), debater("Bob"), judge("Judge Una")
    write(tmp_path, "questions.csv", "topic,premise,correct\nTea?,,\nCars?,,sideways\n,Only a premise,\n")
    spec = write(
        tmp_path,
        "league.yaml",
        "name: L\noptions: {turns: 2}\ndebaters: [Alice, Bob]\njudges: [Judge Una]\nquestions_file: questions.csv\n",
    )
    with pytest.raises(CommandError) as raised:
        run_command("run", str(spec))
    message = str(raised.value)
    assert f"{tmp_path / 'questions.csv'}: line 3: correct must be" in message
    assert f"{tmp_path / 'questions.csv'}: line 4: the topic is empty" in message
    assert f"(the questions_file of {spec})" in message
    assert f"{spec}: line" not in message
    assert not Tournament.objects.exists()


# -- figures that cannot be computed, a clean terminal ---------------------------------------------------------------


def _judged(tournament, winners):
    """Finish every match: `winners[judge][i]` is the side that judge names in match i."""
    for index, match in enumerate(Match.objects.filter(tournament=tournament).order_by("order")):
        names = {"for": match.debater_for.name, "against": match.debater_against.name}
        for judgment in Judgment.objects.filter(match=match).select_related("judge"):
            debate = match.debate if judgment.in_debate else None
            if debate is None:
                debate = Debate.objects.create(topic=match.question.topic, format="duel", in_batch=True)
            side = winners[judgment.judge.name][index]
            Debate.objects.filter(pk=debate.pk).update(status="completed", winner=names[side])
            if judgment.in_debate:
                Match.objects.filter(pk=match.pk).update(debate=debate)
            Judgment.objects.filter(pk=judgment.pk).update(debate=debate)


def test_a_judge_who_never_varies_gives_a_kappa_of_zero_in_json_text_and_page(owner):
    tournament = make(owner, judges=("Judge Una", "Judge Vic"), n_questions=1)  # two matches, two judges each
    for match in Match.objects.filter(tournament=tournament):
        match.debate = Debate.objects.create(topic="x", format="duel", in_batch=True)
        match.save()
    # Una names FOR every time; Vic varies: kappa is 0 (no better than chance), its variance zero.
    _judged(tournament, {"Judge Una": ["for", "for"], "Judge Vic": ["for", "against"]})
    why = (
        "no interval: Judge Una picked FOR every time, so agreement is no better than chance, and with a judge who "
        "never varies kappa's standard error comes out as zero, which says nothing about how sure it is"
    )
    out, err, warned = run_command("report", str(tournament.pk), "--json")
    assert warned == [] and "Warning" not in err
    assert json.loads(out)["panel"]["agreement"] == {"value": 0.0, "why": why}
    text, _, warned = run_command("report", str(tournament.pk))
    assert warned == [] and f"Panel agreement (Cohen's kappa): 0.00 ({why})" in " ".join(text.split())
    page = Client()
    page.force_login(owner)
    html = page.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    escaped = why.replace("'", "&#x27;")
    assert f"(Cohen's kappa): <strong>0.00 ({escaped})</strong>" in html


def test_a_figure_that_cannot_be_computed_reads_a_dash_and_why_on_the_page_in_the_report_and_the_exports(owner):
    # One judge, one match (sides once): Alice argues FOR and wins, Bob never argues FOR, and there is no panel.
    tournament = make(owner, sides="once")
    match = Match.objects.get(tournament=tournament)
    match.debate = Debate.objects.create(topic="x", format="duel", in_batch=True)
    match.save()
    _judged(tournament, {"Judge Una": ["for"]})
    assert match.debater_against.name == "Bob"
    no_panel, bob_for = "one judge: panel figures compare two or more", "no decided verdict as FOR"

    out, _, warned = run_command("report", str(tournament.pk))
    text = " ".join(out.split())
    assert warned == [] and "undefined" not in text
    assert f"Panel agreement: \u2014 ({no_panel})." in text and f"\u2014 ({bob_for})" in text
    client = Client()
    client.force_login(owner)
    html = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    judges = html.split('<section id="judges"')[1].split("</section>")[0]
    assert f"Panel agreement on winners: <strong>\u2014 ({no_panel})</strong>." in judges
    leaderboard = html.split('<section id="leaderboard"')[1].split("</section>")[0]
    bob = next(row for row in leaderboard.split("<tr>") if '<td class="name">Bob</td>' in row)
    assert f"<td>\u2014 ({bob_for})</td>" in bob
    assert "undefined" not in judges and "undefined" not in leaderboard
    ratings = client.get(reverse("tournament_export", args=[tournament.pk, "ratings.csv"])).content.decode()
    rows = {row[1]: dict(zip(exports.RATING_COLUMNS, row, strict=True)) for row in csv.reader(io.StringIO(ratings))}
    assert rows["Bob"]["win_rate_for"] == f"\u2014 ({bob_for})" and rows["Alice"]["win_rate_for"] == "1.0"
    report = json.loads(run_command("report", str(tournament.pk), "--json")[0])
    assert report["panel"]["agreement"] == {"value": None, "why": no_panel}
