"""`manage.py tournament run SPEC.yaml | resume ID | report ID` over the test server."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from chaoslm.runner import inline
from debates import format_cards
from tests.batches.helpers import always_for, debater, judge, provider_for
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)

JUDGE_YAML = """name: Judge Yara
role: judge
personality: Yara weighs evidence.
judging_criteria: Logic first.
provider: bench
"""


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def write_spec(tmp_path, body):
    path = tmp_path / "spec.yaml"
    path.write_text(body)
    return path


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("tournament", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_run_from_a_spec_prints_the_final_report_as_json(tmp_path, llm_server, runner_idle):
    llm_server.configure(rules=always_for(["Alice", "Bob"]))
    bench = provider_for(llm_server, "bench")
    debater("Alice"), debater("Bob"), judge("Judge Una", bench)
    (tmp_path / "yara.yaml").write_text(JUDGE_YAML)
    (tmp_path / "questions.csv").write_text("topic,premise,correct\nTea?,Tea is best,for\nCars?,Ban them,against\n")
    spec = write_spec(
        tmp_path,
        "name: CLI league\nformat: duel\noptions: {turns: 2}\ndebaters: [Alice, Bob]\n"
        "judges: [Judge Una, yara.yaml]\nquestions_file: questions.csv\nsides: both\nrepeats: 1\nconcurrency: 4\n",
    )
    out, _ = run("run", str(spec), "--json")
    report = json.loads(out)
    assert report["tournament"]["name"] == "CLI league" and report["tournament"]["status"] == "completed"
    assert report["progress"] == {"total": 8, "done": 8, "running": 0, "failed": 0}
    assert len(report["matches"]) == 4
    assert {r["name"] for r in report["ratings"]} == {"Alice", "Bob"}
    assert all({"rating", "ci_low", "ci_high"} <= set(r) for r in report["ratings"])
    judges = {j["name"]: j for j in report["judges"]}
    assert judges["Judge Una"]["for_win_rate"]["value"] == 1.0 and judges["Judge Yara"]["verdicts"] == 4
    assert report["panel"]["method"] == "cohen"
    # Question 1's correct side is FOR, question 2's AGAINST: a judge always naming FOR is right half the time.
    assert judges["Judge Una"]["accuracy"]["value"] == 0.5


def test_run_shows_the_size_then_the_leaderboard_and_report_reprints_it(tmp_path, llm_server, runner_idle):
    debater("Alice"), debater("Bob"), judge("Judge Una")
    spec = write_spec(
        tmp_path,
        "name: Small\noptions: {turns: 2}\ndebaters: [Alice, Bob]\njudges: [Judge Una]\n"
        'questions: ["Tea?", {topic: "Cars?", correct: for}]\nsides: once\n',
    )
    out, _ = run("run", str(spec))
    assert "Small: 2 duels and 0 judge replays: 2 debates, 28 LLM calls." in out
    assert "Leaderboard" in out and "Judges" in out
    assert "Panel agreement: — (one judge: panel figures compare two or more)." in " ".join(out.split())
    tournament = Tournament.objects.get()
    again, _ = run("report", str(tournament.pk))
    assert "Leaderboard" in again and "2 of 2 debates done" in again
    resumed, _ = run("resume", str(tournament.pk), "--json")
    assert json.loads(resumed)["progress"]["done"] == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("name: x\ndebaters: [Alice]\njudges: [Judge Una]\nquestions: [Tea]\n", "at least two debaters"),
        (
            "name: x\ndebaters: [Alice, Nobody]\njudges: [Judge Una]\nquestions: [Tea]\n",
            "no persona is named 'Nobody'",
        ),
        ("name: x\ndebaters: [Alice, Bob]\njudges: [Judge Una]\n", "give either questions or questions_file"),
        (
            "name: x\ndebaters: [Alice, Bob]\njudges: [Judge Una]\nquestions: [Tea]\ncolour: red\n",
            "unknown key 'colour'",
        ),
        ("name: x\ndebaters: [Alice, Bob]\njudges: [Judge Una]\nquestions_file: q.csv\n", "no such file"),
        ("name: x\ndebaters: [Alice, Bob]\njudges: [Alice]\nquestions: [Tea]\n", "cannot both debate and judge"),
    ],
)
def test_bad_specs_are_refused_with_a_message(tmp_path, body, message):
    debater("Alice"), debater("Bob"), judge("Judge Una")
    with pytest.raises(CommandError, match=message):
        run("run", str(write_spec(tmp_path, body)))
    assert not Tournament.objects.exists()


def small_spec(tmp_path, visibility="unlisted"):
    """A small spec (two debaters, one judge, one question), also run by tests/batches/test_command.py."""
    debater("Alice"), debater("Bob"), judge("Judge Una")
    return write_spec(
        tmp_path,
        "name: Owned\noptions: {turns: 2}\ndebaters: [Alice, Bob]\njudges: [Judge Una]\n"
        f"questions: ['Tea?']\nsides: once\nvisibility: {visibility}\n",
    )


def test_enqueue_on_the_inline_runner_is_refused(tmp_path):
    with pytest.raises(CommandError, match=r"^--enqueue needs CHAOSLM_RUNNER=celery"):
        run("run", str(small_spec(tmp_path)), "--enqueue")
    assert not Tournament.objects.exists()


BRITISH = (Path(__file__).resolve().parents[2] / "cards" / "british-parliamentary.yaml").read_text()
TEAMS = ("Opening Government", "Opening Opposition", "Closing Government", "Closing Opposition")


def test_a_british_parliamentary_tournament_runs_from_a_spec_with_its_ratings(tmp_path, llm_server, runner_idle):
    """Four-team debates from the command line: each set of four debaters seated once a question, the rotation
    moving on (sides: once), the adjudicator's ranking of each counted as its six pairwise results."""
    ballot = {
        "ranking": ["Closing Opposition", "Opening Government", "Opening Opposition", "Closing Government"],
        "scores": {t: {"argument": 7, "engagement": 7, "role": 7} for t in TEAMS},
    }
    llm_server.configure(rules=[{"match": "Now write your ranking as a JSON object", "reply": json.dumps(ballot)}])
    format_cards.save_card(BRITISH, owner=None)  # shipped, as `make run` loads it
    for name in ("Ann", "Ben", "Cy", "Di"):
        debater(name)
    judge("Judge Una")
    spec = write_spec(
        tmp_path,
        "name: BP cup\nformat: british-parliamentary\noptions: {word_limit: 60}\ndebaters: [Ann, Ben, Cy, Di]\n"
        'judges: [Judge Una]\nquestions: ["Should cities ban cars?", "Should homework be banned?"]\nsides: once\n',
    )
    size, _ = run("run", str(spec))
    assert "BP cup: 2 british-parliamentary debates and 0 judge replays: 2 debates, " in size
    tournament = Tournament.objects.get()
    report = json.loads(run("report", str(tournament.pk), "--json")[0])
    assert report["tournament"]["status"] == "completed" and report["tournament"]["format"] == "british-parliamentary"
    assert report["progress"] == {"total": 2, "done": 2, "running": 0, "failed": 0}
    # Question 1 seats Ann, Ben, Cy, Di as OG, OO, CG, CO; question 2 the next rotation: Ben, Cy, Di, Ann.
    placed = [[(t["place"], t["label"], t["entrant"]) for t in m["teams"]] for m in report["matches"]]
    assert placed == [
        [
            ("1st", "Closing Opposition", "Di"),
            ("2nd", "Opening Government", "Ann"),
            ("3rd", "Opening Opposition", "Ben"),
            ("4th", "Closing Government", "Cy"),
        ],
        [
            ("1st", "Closing Opposition", "Ann"),
            ("2nd", "Opening Government", "Ben"),
            ("3rd", "Opening Opposition", "Cy"),
            ("4th", "Closing Government", "Di"),
        ],
    ]
    # Two rankings, six pairwise results each: Ann 2-1 and 3-0, Ben 1-2 and 2-1, Cy 0-3 and 1-2, Di 3-0 and 0-3.
    wins = {r["name"]: (r["wins"], r["losses"]) for r in report["ratings"]}
    assert wins == {"Ann": (5, 1), "Ben": (3, 3), "Di": (3, 3), "Cy": (1, 5)}
    assert report["ratings"][0]["name"] == "Ann" and report["ratings"][-1]["name"] == "Cy"
    assert all({"rating", "ci_low", "ci_high"} <= set(r) for r in report["ratings"])
    assert [j["verdicts"] for j in report["judges"]] == [12]


def test_run_gives_the_cost_range_the_new_form_gives(tmp_path, llm_server, runner_idle):
    paid = provider_for(llm_server, "paid")
    paid.input_price, paid.output_price = Decimal(100), Decimal(200)  # dollars a million tokens
    paid.save()
    debater("Alice", paid), debater("Bob", paid), judge("Judge Una", paid)
    spec = write_spec(
        tmp_path,
        "name: Priced\noptions: {turns: 2}\ndebaters: [Alice, Bob]\njudges: [Judge Una]\n"
        'questions: ["Tea?"]\nsides: once\n',
    )
    out, _ = run("run", str(spec))
    # 14 calls of 150 to 6,000 tokens read and 5 to 1,000 written, at $100 and $200 a million: $0.224 to $11.20.
    assert (
        "Priced: 1 duel and 0 judge replays: 1 debate, 14 LLM calls. It will take under a minute (1 call at once, at "
        "a guess of 4.0 s a call for a hosted model: no call timed yet). It will cost about $0.224 to $11.20 (at 150 "
        "to 6,000 tokens read and 5 to 1,000 written a call)." in " ".join(out.split())
    ), out


PRIVATE_CARD = (
    (Path(__file__).resolve().parents[2] / "cards" / "lincoln-douglas.yaml")
    .read_text()
    .replace("name: lincoln-douglas", "name: my-ld")
)


def test_a_tournament_of_its_owners_private_card_is_sized_as_any_other(tmp_path, llm_server, runner_idle):
    llm_server.configure(rules=always_for(["Alice", "Bob"]))
    debater("Alice"), debater("Bob"), judge("Judge Una")
    ada = get_user_model().objects.create_user("ada")
    assert not format_cards.save_card(PRIVATE_CARD, owner=ada, public=False).public
    spec = write_spec(
        tmp_path,
        "name: Mine\nformat: my-ld\ndebaters: [Alice, Bob]\njudges: [Judge Una]\nquestions: ['Tea?']\nsides: once\n",
    )
    out, _ = run("run", str(spec), "--owner", "ada")
    # Sized from the card as its owner may use it: one debate of the Lincoln-Douglas card's 23 calls. Sized as
    # nobody, the line said "its formats are checked as it is made."
    assert "Mine: 1 my-ld debate and 0 judge replays: 1 debate, 23 LLM calls." in out
    assert "Mine (#" in out and "completed, 1 of 1 debates done, 0 failed." in out
