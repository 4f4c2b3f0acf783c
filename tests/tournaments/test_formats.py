"""Tournaments of any two-sided format (duel, classic, structured), over the test server: a structured tournament
judged by a two-judge panel from the command line, what its judges read, and a report that compares formats."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from batches.checks import Contestant
from chaoslm.runner import inline
from debates.formats import registered
from debates.formats.base import SeatSpec
from debates.formats.duel import CONFIRM, EVALUATE, Duel
from debates.formats.structured import PREPARATION
from debates.models import Debate
from tests.batches.helpers import always_for, debater, judge, questions, run_to_end
from tournaments import design, results, services
from tournaments.models import Judgment, Match, Tournament

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "PRIVATE-PREPARATION-NOTES"


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def _cli(*args):
    out = io.StringIO()
    call_command("tournament", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_a_structured_tournament_with_a_two_judge_panel_runs_from_the_command_line(tmp_path, llm_server, runner_idle):
    # Each debater's preparation is private: a judge must never read it. Both judges always name the FOR side.
    llm_server.configure(
        rules=[{"match": "Prepare privately before the debate", "reply": SECRET}, *always_for(["Alice", "Bob"])]
    )
    debater("Alice"), debater("Bob"), judge("Judge Una"), judge("Judge Vic")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: Structured cup\nformat: structured\noptions: {questions: 1}\ndebaters: [Alice, Bob]\n"
        "judges: [Judge Una, Judge Vic]\nquestions: [{topic: 'Tea?', premise: 'Tea is best', correct: for}]\n"
        "sides: once\nvisibility: unlisted\n"
    )
    out = _cli("run", str(spec))
    # One structured debate (12 calls), read again by each judge (an evaluation and a score for each of its ten
    # public statements, then the four verdict calls).
    assert "Structured cup: 1 structured debate and 2 judge replays: 3 debates, 60 LLM calls." in out
    tournament = Tournament.objects.get()
    assert tournament.status == "completed" and tournament.format == "structured"
    match = Match.objects.get()
    assert match.format == "structured" and match.debate.format == "structured"
    # The structured debate is the format's own, unchanged: its two sides and no judge inside.
    assert sorted(match.debate.seats.values_list("key", "name")) == [("affirmative", "Alice"), ("negative", "Bob")]
    replays = [j.debate for j in Judgment.objects.select_related("debate", "judge").order_by("judge__order")]
    assert [(d.format, d.status, d.winner) for d in replays] == [("sides_judge", "completed", "Alice")] * 2
    assert not Judgment.objects.filter(in_debate=True).exists()
    # What a judge read: the ten public statements in the debate's order, each in the duel's evaluation prompt,
    # never a preparation.
    public = list(match.debate.events.filter(kind="TURN").order_by("ordinal").values_list("content", flat=True))
    assert len(public) == 10
    judge_requests = [r for r in llm_server.requests if "judges." in r.messages[0]["content"]]
    assert len(judge_requests) == 2 * 24
    assert all(SECRET not in json.dumps(r.body) for r in judge_requests)
    speakers = ["Alice", "Bob", "Alice", "Bob", "Alice", "Bob", "Bob", "Alice", "Alice", "Bob"]
    expected = [EVALUATE.format(name=name, statement=text) for name, text in zip(speakers, public, strict=True)]
    for name in ("Judge Una", "Judge Vic"):
        own = [r.messages[-1]["content"] for r in judge_requests if name in r.messages[0]["content"]]
        assert [prompt for prompt in own if "just argued" in prompt] == expected
    confirm = CONFIRM.format(a="Alice", b="Bob")
    assert sum(r.messages[-1]["content"] == confirm for r in judge_requests) == 2
    # Its report: both verdicts, and the two judges' agreement.
    assert "Leaderboard" in out and "Judge Una" in out and "Judge Vic" in out
    report = json.loads(_cli("report", str(tournament.pk), "--json"))
    assert report["progress"] == {"total": 3, "done": 3, "running": 0, "failed": 0}
    assert [(j["name"], j["verdicts"]) for j in report["judges"]] == [("Judge Una", 1), ("Judge Vic", 1)]
    assert report["formats"] == []  # one format: nothing to compare
    # The debaters' prompts are the structured format's own.
    prepared = PREPARATION.format(topic="Tea?", side="affirmative", other="negative")
    assert any(r.messages[-1]["content"].startswith(prepared) for r in llm_server.requests)


def test_a_tournament_that_mixes_formats_compares_them(llm_server, runner_idle):
    llm_server.configure(rules=always_for(["Alice", "Bob"]))
    tournament = services.create_tournament(
        name="Mixed",
        debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[Contestant.of(judge(n)) for n in ("Judge Una", "Judge Vic")],
        questions=questions(1),
        options={"turns": 2, "questions": 1},
        sides="once",
        formats=["duel", "structured"],
    )
    assert list(Match.objects.order_by("order").values_list("format", flat=True)) == ["duel", "structured"]
    # A duel's first judge sits inside it; a structured debate has no judge, so both of its judgments are replays.
    assert sorted(Judgment.objects.values_list("match__format", "in_debate")) == [
        ("duel", False),
        ("duel", True),
        ("structured", False),
        ("structured", False),
    ]
    finished = run_to_end(tournament)
    assert finished.status == "completed"
    assert sorted(Debate.objects.values_list("format", flat=True)) == [
        "duel",
        "judge",
        "sides_judge",
        "sides_judge",
        "structured",
    ]
    report = results.report(finished)
    assert [(f.name, f.matches, f.verdicts, f.for_win_rate.value) for f in report.formats] == [
        ("duel", 1, 2, 1.0),
        ("structured", 1, 2, 1.0),
    ]
    out = _cli("report", str(finished.pk))
    assert "Formats compared" in out and "Structured" in out


def test_a_classic_tournament_seats_its_moderator_and_the_sizes_add_up(llm_server):
    with pytest.raises(services.TournamentError, match="A classic debate needs a moderator"):
        services.create_tournament(
            name="No chair",
            debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
            judges=[Contestant.of(judge("Judge Una"))],
            questions=questions(1),
            formats=["classic"],
        )
    size = design.estimate(1, 2, 2, "once", 1, {"free_turns": 2}, ("classic",))
    # 8 debater statements and 4 moderator slots; each of two judges reads the 8 statements (2 x 8 + 4 calls).
    assert (size.matches, size.replays, size.calls) == (1, 2, 12 + 2 * 20)
    assert design.estimate(1, 2, 2, "once", 1, {"turns": 6}).calls == 30 + 16  # a duel's 30 calls, unchanged


class TimedDuel(Duel):
    """A duel with a timekeeper's seat it needs: on no side, neither a judge's nor a moderator's (test-only)."""

    name = "timed_duel"
    title = "Timed duel"
    seat_specs = (*Duel.seat_specs, SeatSpec("timekeeper", "timekeeper", "Timekeeper"))


def test_a_format_with_a_required_seat_a_tournament_cannot_fill_is_refused():
    # _seats fills a side's seats, the judge seats and a moderator's; the timekeeper's would stay empty.
    with registered(TimedDuel()):
        assert "timed_duel" in design.formats()
        with pytest.raises(services.TournamentError) as raised:
            services.check_tournament(
                name="Timed cup",
                debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
                judges=[Contestant.of(judge("Judge Una"))],
                questions=questions(1),
                formats=["timed_duel"],
            )
    assert [(p.message, p.keys) for p in raised.value.problems] == [
        (
            "A timed_duel debate has a required seat a tournament cannot fill (it argues no side and is no judge's or "
            "moderator's): Timekeeper (timekeeper).",
            ("format",),
        )
    ]

    # Its seat not required, the same format is run.
    class OptionalTimekeeper(TimedDuel):
        name = "optional_timekeeper"
        seat_specs = (*Duel.seat_specs, SeatSpec("timekeeper", "timekeeper", "Timekeeper", required=False))

    with registered(OptionalTimekeeper()):
        checked = services.check_tournament(
            name="Timed cup",
            debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
            judges=[Contestant.of(judge("Judge Una"))],
            questions=questions(1),
            formats=["optional_timekeeper"],
        )
    assert checked.size.debates == 2
