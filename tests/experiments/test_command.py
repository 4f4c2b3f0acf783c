"""`manage.py experiment run SPEC.yaml | resume ID | report ID` over the test server; the CSV export's safety."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from chaoslm.runner import inline
from experiments.models import Experiment
from tests.batches.helpers import debater, judge

pytestmark = pytest.mark.django_db(transaction=True)

QUESTIONS = "\n".join(
    json.dumps(row)
    for row in (
        {
            "passage": "Pell feared sheep.",
            "question": "What did Pell fear?",
            "answers": ["sheep", "deer"],
            "correct": 0,
        },
        {"passage": "=HYPERLINK() wins.", "question": "=1+1", "answers": ["-2", "@sum"], "correct": None},
    )
)


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("experiment", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_run_from_a_spec_prints_the_report_as_json_and_report_prints_the_tables(tmp_path, llm_server, runner_idle):
    debater("Ada"), debater("Bob"), judge("Judy")
    (tmp_path / "set.jsonl").write_text(QUESTIONS)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: CLI experiment\nquestions_file: set.jsonl\nprotocols: [evidence_debate, blind]\n"
        "debaters: [Ada, Bob]\njudges: [Judy]\noptions: {rounds: 1, word_limit: 50}\nconcurrency: 4\n"
    )
    out, err = run("run", str(spec), "--json")
    data = json.loads(out)
    assert "CLI experiment: 12 runs (2 questions, evidence_debate, blind, both answer orders)" in " ".join(err.split())
    assert data["experiment"]["status"] == "completed"
    assert data["progress"] == {"total": 12, "done": 12, "running": 0, "failed": 0}
    assert len(data["runs"]) == 12
    # The test server's judge answers 50-50: each scores half where the correct answer is known.
    blind = data["report"]["protocols"][1]
    assert blind["protocol"] == "blind" and blind["accuracy"]["value"] == 0.5
    assert data["report"]["judges"][0]["flip_rate"] == {
        "value": None,
        "why": "no pair of runs in both orders has a choice in both (unparsed or 50-50 answers)",
    }
    experiment = Experiment.objects.get()
    out, _ = run("report", str(experiment.pk))
    assert "Judge accuracy by protocol" in out and "Debaters" in out and "Judges" in out
    assert "Accuracy, Debate \u2212 Blind: 0.00 (95% interval 0.00 to 0.00)" in " ".join(out.split())
    assert "\u2014" in out and "undefined" not in out


def test_a_bad_question_file_is_refused_naming_the_file_and_line(tmp_path):
    (tmp_path / "set.jsonl").write_text('{"passage": "p", "question": "q", "answers": ["a"]}\n')
    spec = tmp_path / "spec.yaml"
    spec.write_text("questions_file: set.jsonl\nprotocols: [blind]\njudges: []\n")
    with pytest.raises(CommandError, match=r"set\.jsonl line 1: answers must be a list of exactly two answers"):
        run("run", str(spec))
    assert not Experiment.objects.exists()


def test_resume_of_an_unknown_experiment_says_so():
    with pytest.raises(CommandError, match="there is no experiment 404"):
        run("resume", "404")


def blind_spec(tmp_path, visibility="unlisted"):
    """A small spec (one judge, the blind protocol), also run by tests/batches/test_command.py."""
    judge("Judy")
    (tmp_path / "set.jsonl").write_text(QUESTIONS)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"name: Owned\nquestions_file: set.jsonl\nprotocols: [blind]\njudges: [Judy]\nvisibility: {visibility}\n"
    )
    return spec


@pytest.mark.parametrize("action", [["run", "SPEC"], ["resume", "1"]])
def test_enqueue_on_the_inline_runner_is_refused_as_the_debate_command_does(tmp_path, action):
    args = [str(blind_spec(tmp_path)) if a == "SPEC" else a for a in action]
    with pytest.raises(CommandError, match=r"^--enqueue needs CHAOSLM_RUNNER=celery: the inline runner lives in"):
        run(*args, "--enqueue")
    assert not Experiment.objects.exists()


def test_the_help_speaks_of_an_experiment():
    from experiments.management.commands.experiment import Command

    help_text = Command().create_parser("manage.py", "experiment").format_help()
    assert "create an experiment from SPEC.yaml" in help_text and "a experiment" not in help_text
