"""Tournaments run on the inline runner against test servers over HTTP: scheduling, retries, scripted judges."""

from __future__ import annotations

import time
from itertools import pairwise

import pytest

from batches import kinds
from chaoslm import limits
from chaoslm.llm.testserver import TestLLMServer
from debates import limits as debate_limits
from debates.models import Debate
from tests.batches.helpers import (
    always_for,
    confirm_rule,
    debater,
    favouring,
    judge,
    provider_for,
    questions,
    run_to_end,
)
from tournaments import results, services, state
from tournaments.models import Judgment, Match, Tournament
from tournaments.questions import QuestionSpec

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = ["Alice", "Bob", "Carol"]


@pytest.fixture
def judge_server():
    with TestLLMServer() as server:
        yield server


def contestants(personas):
    return [services.Contestant.of(p) for p in personas]


def test_a_tournament_never_runs_more_than_concurrency_debates_and_judges_every_match(llm_server, judge_server):
    judge_server.configure(rules=always_for(NAMES), latency=0.02)
    llm_server.configure(latency=0.02)
    bench = provider_for(judge_server, "bench")
    tournament = services.create_tournament(
        name="Concurrency",
        debaters=contestants([debater(n) for n in NAMES]),
        judges=contestants([judge("Judge Una", bench)]),
        questions=questions(2),
        options={"turns": 2},
        concurrency=3,
    )
    finished = run_to_end(tournament)
    assert finished.status == Tournament.Status.COMPLETED
    matches = list(Match.objects.filter(tournament=tournament).select_related("debate", "debater_for"))
    assert len(matches) == 12
    assert all(m.debate.status == Debate.Status.COMPLETED and m.attempts == 1 for m in matches)
    # The judge always names the FOR side, and the duel's verdict says so.
    assert all(m.debate.winner == m.debater_for.name for m in matches)
    # At no moment were more than three debates running.
    spans = sorted((m.debate.started_at, m.debate.finished_at) for m in matches)
    most = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    assert most <= 3
    assert most >= 2  # and it did run them side by side
    # 12 duels of two turns: 14 calls each; the judge made 8 of them, on its own server.
    assert len(llm_server.requests) == 12 * 6
    assert len(judge_server.requests) == 12 * 8
    usage = {u.name: u for u in results.usage(tournament)}
    assert usage["Judge Una"].calls == 96
    assert sum(u.calls for u in usage.values()) == 168
    figures = state.progress(finished)
    assert (figures.total, figures.done, figures.running, figures.failed) == (12, 12, 0, 0)


def test_a_failed_debate_is_retried_once_then_counted_failed_and_the_tournament_goes_on(llm_server, settings):
    settings.CHAOSLM_LLM_MAX_RETRIES = 1  # a step fails after two HTTP 500s in a row
    llm_server.configure(
        rules=[
            # The flaky question's opening fails once (two requests), then the rule is used up.
            {"match": r"topic is: Flaky\?[\s\S]*about to deliver your opening", "fault": "500", "times": 2},
            # The doomed question's opening always fails.
            {"match": r"topic is: Doomed\?[\s\S]*about to deliver your opening", "fault": "500"},
        ]
    )
    tournament = services.create_tournament(
        name="Faults",
        debaters=contestants([debater("Alice"), debater("Bob")]),
        judges=contestants([judge("Judge Una")]),
        questions=[QuestionSpec("Flaky?"), QuestionSpec("Doomed?"), QuestionSpec("Fine?")],
        options={"turns": 2},
        sides="once",
        concurrency=1,
    )
    finished = run_to_end(tournament)
    assert finished.status == Tournament.Status.COMPLETED
    by_topic = {
        m.question.topic: m for m in Match.objects.filter(tournament=tournament).select_related("debate", "question")
    }
    assert by_topic["Flaky?"].debate.status == Debate.Status.COMPLETED and by_topic["Flaky?"].attempts == 2
    assert by_topic["Doomed?"].debate.status == Debate.Status.ERROR and by_topic["Doomed?"].attempts == 2
    assert by_topic["Fine?"].debate.status == Debate.Status.COMPLETED and by_topic["Fine?"].attempts == 1
    figures = state.progress(finished)
    assert (figures.total, figures.done, figures.failed) == (3, 2, 1)
    # Each debate exists once: a retry resumes the same debate, it never makes another.
    assert Debate.objects.count() == 3


def test_each_finished_debate_starts_the_next_one_itself_without_waiting_for_the_tick(
    llm_server, settings, monkeypatch
):
    # The tick and the page's pushes ten minutes apart: only the pass a finished debate runs at once can start
    # the next match or replay before run_to_end's deadline; the tournament's loop wakes only to hear it settled.
    settings.CHAOSLM_BATCH_TICK = 600
    monkeypatch.setattr(kinds, "PUSH_EVERY", 600)
    tournament = services.create_tournament(
        name="Back to back",
        debaters=contestants([debater("Alice"), debater("Bob")]),
        judges=contestants([judge("Judge Una"), judge("Judge Vic")]),
        questions=questions(2),
        options={"turns": 2},
        sides="once",
        concurrency=1,
    )
    finished = run_to_end(tournament, timeout=60)
    assert finished.status == Tournament.Status.COMPLETED
    # Two duels, and a replay of each by the second judge, one after another.
    debates = list(Debate.objects.order_by("started_at"))
    assert [d.format for d in debates] == ["duel", "judge", "duel", "judge"]
    assert all(d.status == Debate.Status.COMPLETED for d in debates)
    assert all(a.finished_at <= b.started_at for a, b in pairwise(debates))


def test_a_paused_tournament_starts_nothing_until_resumed(llm_server):
    tournament = services.create_tournament(
        name="Paused",
        debaters=contestants([debater("Alice"), debater("Bob")]),
        judges=contestants([judge("Judge Una")]),
        questions=questions(1),
        options={"turns": 2},
    )
    services.TOURNAMENT.pause(tournament)
    services.TOURNAMENT.advance(tournament.pk)
    assert Debate.objects.count() == 0 and services.TOURNAMENT.is_settled(tournament.pk)
    services.TOURNAMENT.resume(tournament)
    finished = run_to_end(tournament)
    assert finished.status == Tournament.Status.COMPLETED and Debate.objects.count() == 2


def test_a_cancelled_tournament_starts_nothing_more(llm_server):
    tournament = services.create_tournament(
        name="Cancelled",
        debaters=contestants([debater("Alice"), debater("Bob")]),
        judges=contestants([judge("Judge Una")]),
        questions=questions(3),
        options={"turns": 2},
    )
    services.TOURNAMENT.cancel(tournament)
    services.TOURNAMENT.advance(tournament.pk)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.CANCELLED and Debate.objects.count() == 0
    assert services.TOURNAMENT.is_settled(tournament.pk)


def test_bad_tournaments_are_refused_with_a_message(db):
    alice, bob = debater("Alice"), debater("Bob")
    una = judge("Judge Una")
    make = dict(name="x", questions=questions(1))
    with pytest.raises(services.TournamentError, match="at least two debaters"):
        services.create_tournament(debaters=contestants([alice]), judges=contestants([una]), **make)
    with pytest.raises(services.TournamentError, match="at least one judge"):
        services.create_tournament(debaters=contestants([alice, bob]), judges=[], **make)
    with pytest.raises(services.TournamentError, match="cannot both debate and judge"):
        services.create_tournament(debaters=contestants([alice, bob]), judges=contestants([alice]), **make)
    with pytest.raises(services.TournamentError, match="Turns must be"):
        services.create_tournament(
            debaters=contestants([alice, bob]), judges=contestants([una]), options={"turns": 0}, **make
        )
    assert not Tournament.objects.exists() and not Judgment.objects.exists()


def judge_panel(servers_and_rules, names):
    """Judges each on a test server of its own, scripted by `rules` (a judge's prompts never name it)."""
    panel = []
    for index, (server, rules) in enumerate(servers_and_rules):
        server.configure(rules=rules)
        panel.append(judge(f"Judge {index + 1}", provider_for(server, f"bench-{index + 1}")))
    return panel


def test_a_judge_that_always_names_for_wins_every_for_and_with_sides_swapped_all_debaters_tie(llm_server, judge_server):
    panel = judge_panel([(judge_server, always_for(NAMES))], NAMES)
    tournament = services.create_tournament(
        name="Position bias",
        debaters=contestants([debater(n) for n in NAMES]),
        judges=contestants(panel),
        questions=questions(2),
        options={"turns": 2},
        repeats=2,
        concurrency=6,
    )
    assert run_to_end(tournament).status == Tournament.Status.COMPLETED
    # Every match judged exactly once per judge and repeat: the duel's own verdict, then one replay.
    judgments = list(Judgment.objects.filter(match__tournament=tournament).select_related("debate"))
    assert len(judgments) == 12 * 2
    assert all(j.debate.status == Debate.Status.COMPLETED for j in judgments)
    assert {j.debate.format for j in judgments if j.in_debate} == {"duel"}
    assert {j.debate.format for j in judgments if not j.in_debate} == {"judge"}
    report = results.report(tournament)
    (judge_figures,) = report.judges
    assert judge_figures.verdicts == 24
    assert judge_figures.for_win_rate.value == 1.0
    assert judge_figures.self_consistency.value == 1.0
    assert report.panel.agreement.value is None and "one judge" in report.panel.agreement.why.lower()
    for r in report.ratings:
        assert (r.wins_for, r.losses_for, r.wins_against, r.losses_against) == (8, 0, 0, 8)
        assert r.win_rate_for.value == 1.0 and r.win_rate_against.value == 0.0
    # Sides swapped cancel the bias: everyone ties, each rating inside every other's interval.
    for r in report.ratings:
        for other in report.ratings:
            assert other.ci_low <= r.rating <= other.ci_high


def test_a_judge_that_favours_one_debater_ranks_it_first_with_an_interval_clear_of_the_others(llm_server, judge_server):
    panel = judge_panel([(judge_server, favouring("Bob", NAMES))], NAMES)
    tournament = services.create_tournament(
        name="Favourite",
        debaters=contestants([debater(n) for n in NAMES]),
        judges=contestants(panel),
        questions=questions(4),
        options={"turns": 2},
        concurrency=8,
    )
    assert run_to_end(tournament).status == Tournament.Status.COMPLETED
    report = results.report(tournament)
    first, *rest = report.ratings
    assert first.name == "Bob" and first.wins == 16 and first.losses == 0
    assert all(first.ci_low > other.ci_high for other in rest)


def test_two_judges_that_always_disagree_give_a_kappa_below_zero(llm_server, judge_server):
    # Judge 1 names whichever debater comes first in the alphabet, judge 2 the other one: they never agree,
    # and each names FOR about half the time.
    pairs = [(a, b) for a in NAMES for b in NAMES if a != b]
    first_in_alphabet = [confirm_rule(a, b, min(a, b)) for a, b in pairs]
    other_one = [confirm_rule(a, b, max(a, b)) for a, b in pairs]
    with TestLLMServer() as second_server:
        panel = judge_panel([(judge_server, first_in_alphabet), (second_server, other_one)], NAMES)
        tournament = services.create_tournament(
            name="Disagreement",
            debaters=contestants([debater(n) for n in NAMES]),
            judges=contestants(panel),
            questions=questions(2),
            options={"turns": 2},
            concurrency=8,
        )
        assert run_to_end(tournament).status == Tournament.Status.COMPLETED
    report = results.report(tournament)
    assert report.panel.method == "cohen"
    assert report.panel.agreement.value is not None and report.panel.agreement.value < 0
    assert [j.verdicts for j in report.judges] == [12, 12]
    # The replay judged the duel's public turns only, with the duel's verdict prompts.
    replay = Judgment.objects.filter(match__tournament=tournament, in_debate=False).select_related("debate").first()
    assert replay.debate.format == "judge" and replay.debate.options["source_debate"] == replay.match.debate_id


def test_one_owner_s_matches_stay_within_their_cap_across_tournaments_and_leave_the_debate_cap_free(
    llm_server, judge_server, settings, django_user_model
):
    settings.CHAOSLM_MAX_RUNNING_BATCH_DEBATES = 2
    settings.CHAOSLM_MAX_RUNNING_DEBATES = 1
    owner = django_user_model.objects.create_user("tess", password="pw-123456")
    judge_server.configure(rules=always_for(NAMES), latency=0.05)
    llm_server.configure(latency=0.05)
    bench = provider_for(judge_server, "bench")
    first, second = (
        services.create_tournament(
            name=f"Capped {i}",
            debaters=contestants([debater(n) for n in NAMES]),
            judges=contestants([judge("Judge Una", bench)]),
            questions=questions(1),
            options={"turns": 2},
            concurrency=3,
            owner=owner,
        )
        for i in range(2)
    )
    services.TOURNAMENT.start(first)
    deadline = time.monotonic() + 30
    while not Debate.objects.filter(owner=owner, status=Debate.Status.RUNNING).exists():
        assert time.monotonic() < deadline, "no match started"
        time.sleep(0.02)
    # Matches count against their own cap: the owner may still start a debate of their own.
    with limits.starting(owner):
        debate_limits.check_start(owner, rate=False)
    assert run_to_end(second).status == Tournament.Status.COMPLETED
    assert run_to_end(first).status == Tournament.Status.COMPLETED
    debates = list(Debate.objects.filter(owner=owner))
    assert len(debates) == 12 and all(d.in_batch for d in debates)
    # Two tournaments of concurrency 3 each, yet never more than two of the owner's matches at once.
    spans = sorted((d.started_at, d.finished_at) for d in debates)
    assert max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans) <= 2
