"""`manage.py comparison run SPEC.yaml | report ID` end to end: the arithmetic sample under a single agent, a majority
of five, Du et al.'s debate (3 agents, 2 rounds) and MAD, against the scripted test server; the report read
against an independent computation from the stored runs."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from chaoslm.runner import inline
from comparisons.arithmetic import generate
from comparisons.models import Comparison, Run
from debates import format_cards
from debates.models import Debate
from tests.batches.helpers import debater
from tests.comparisons.helpers import ROOT, answer_rules, import_shipped_cards, recompute

pytestmark = pytest.mark.django_db(transaction=True)

SPEC = """\
name: Du et al. against a vote
sample: arithmetic
count: 6
difficulty: 3
seed: 4
persona: Ada
arms:
  - {format: single-agent}
  - {format: self-consistency, agents: 5}
  - {format: multi-agent-debate, name: Du et al., agents: 3, options: {rounds: 2}}
  - {format: mad, options: {rounds: 3}}
concurrency: 6
"""


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("comparison", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_comparison_runs_from_its_spec_and_its_report_is_the_stored_runs_own(tmp_path, llm_server, runner_idle):
    import_shipped_cards()
    debater("Ada")
    llm_server.configure(rules=answer_rules(generate(6, 3, 4)), seed=11)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    out, err = run("run", str(spec), "--json")
    said = " ".join(err.split())
    # 6 x (1 + 5 + 3 * 3 + 4 to 9) calls: MAD's moderator may end it after its first round.
    arms = "single-agent, self-consistency, Du et al., mad"
    # Its size, its time and its cost as the new form says them, from the checks its create makes, before anything
    # is saved. No call is timed yet on a hosted endpoint: 4 s a call, 6 at once, 76 to 96 s.
    assert (
        f"Du et al. against a vote: 24 runs (6 questions \u00d7 {arms}), 114 to 144 model calls. "
        "It will take about 2 minutes (6 calls at once, at a guess of 4.0 s a call for a hosted model: no call timed "
        "yet). Its cost is unknown: none of its models has a known price." in said
    )
    data = json.loads(out)
    assert data["comparison"]["status"] == "completed"
    assert data["progress"] == {"total": 24, "done": 24, "running": 0, "failed": 0}
    comparison = Comparison.objects.get()
    # One debate per question and arm, each of its arm's format, the question its topic.
    runs = Run.objects.filter(comparison=comparison).select_related("debate", "question")
    assert runs.count() == 24 and all(r.debate.status == Debate.Status.COMPLETED for r in runs)
    assert {r.debate.topic for r in runs} == {q.question for q in generate(6, 3, 4)}
    assert sorted({r.debate.seats.count() for r in runs if r.arm == 1}) == [5]

    expected = recompute(comparison)
    report = data["report"]
    assert [a["arm"] for a in report["arms"]] == ["single-agent", "self-consistency", "Du et al.", "mad"]
    for arm in report["arms"]:
        mine = expected["arms"][arm["arm"]]
        assert arm["questions"] == mine["questions"] == 6
        assert arm["correct"] == mine["correct"]
        assert arm["accuracy"]["value"] == pytest.approx(mine["correct"] / 6)
        assert (arm["accuracy"]["low"], arm["accuracy"]["high"]) == pytest.approx(mine["wilson"])
        assert arm["calls"]["total"] == mine["calls"]
        assert arm["calls"]["per_question"]["value"] == pytest.approx(mine["calls"] / 6)
    assert report["arms"][0]["calls"]["total"] == 6 and report["arms"][1]["calls"]["total"] == 30
    assert report["arms"][2]["calls"]["total"] == 54
    mad = report["arms"][3]
    assert 6 * 4 <= mad["calls"]["total"] <= 6 * 10
    assert mad["rounds"]["runs"] == 6 and mad["rounds"]["saved"] >= 0
    assert len(report["pairs"]) == 6
    for pair in report["pairs"]:
        mine = expected["pairs"][(pair["arm_a"], pair["arm_b"])]
        assert (pair["b"], pair["c"]) == (mine["b"], mine["c"])
        assert pair["p_value"]["value"] == pytest.approx(mine["p"])
    # Five agents' first answers and final answers are each run's agreement; Du et al.'s move over two rounds.
    assert report["arms"][1]["agreement"]["questions"] == 6
    assert report["arms"][2]["agreement"]["questions"] == 6
    assert len(data["runs"]) == 24 and data["chart"]["x"] == "calls"

    out, _ = run("report", str(comparison.pk))
    text = " ".join(out.split())
    assert f"Du et al. against a vote (#{comparison.pk}): completed, 24 of 24 runs done, 0 failed." in text
    assert "Accuracy by arm" in text and "Pairs of arms (exact McNemar)" in text
    assert (
        "An arm's cost is unknown when any of its runs made a call at an unknown price: single-agent, 6 of 6; "
        "self-consistency, 6 of 6; Du et al., 6 of 6; mad, 6 of 6." in text
    )
    assert "(6 of its runs made a call of unknown price)" not in text and "undefined" not in text


def test_a_spec_with_many_problems_is_refused_naming_each(tmp_path):
    import_shipped_cards()
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "sample: arithmetic\ncount: many\npersona: Nobody\nconcurrency: 2\n"
        "arms:\n  - {format: duel}\n  - {format: nothing-like-it}\n  - {format: mad, agents: x, colour: red}\n"
    )
    with pytest.raises(CommandError) as refused:
        run("run", str(spec))
    message = str(refused.value)
    assert "count: expected a whole number" in message
    assert "persona: no persona is named 'Nobody'" in message
    assert "arms[3]: unknown key 'colour'" in message
    assert "arms[3]: agents: expected a whole number" in message
    assert not Comparison.objects.exists()


PRIVATE_CARD = (ROOT / "cards" / "single-agent.yaml").read_text().replace("name: single-agent", "name: my-answer")


def test_a_comparison_naming_its_owners_private_card_is_sized_as_any_other(tmp_path, llm_server, runner_idle):
    import_shipped_cards()
    debater("Ada")
    ada = get_user_model().objects.create_user("ada")
    card = format_cards.save_card(PRIVATE_CARD, owner=ada, public=False)
    assert not card.public
    llm_server.configure(rules=answer_rules(generate(3, 1, 0)))
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: Mine\nsample: arithmetic\ncount: 3\ndifficulty: 1\npersona: Ada\nconcurrency: 3\n"
        "arms:\n  - {format: my-answer}\n  - {format: single-agent}\n"
    )
    out, err = run("run", str(spec), "--owner", "ada", "--json")
    # 3 questions x (1 + 1) calls, at 4 s a call with no call timed yet, three at once: 8 s.
    assert (
        "Mine: 6 runs (3 questions \u00d7 my-answer, single-agent), 6 model calls. It will take under a minute "
        "(3 calls at once, at a guess of 4.0 s a call for a hosted model: no call timed yet)."
    ) in " ".join(err.split())
    data = json.loads(out)
    assert data["progress"] == {"total": 6, "done": 6, "running": 0, "failed": 0}
    assert [a["arm"] for a in data["report"]["arms"]] == ["my-answer", "single-agent"]
