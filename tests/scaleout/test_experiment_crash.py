"""An experiment on Celery workers over PostgreSQL and Redis, its worker SIGKILLed again and again: every run
(question, protocol, order, judge, speakers) is judged exactly once."""

import json
import random
import time

import psycopg
import pytest

pytestmark = pytest.mark.scaleout

JUDGE = """name: Judge Quill
role: judge
personality: Quill reads closely.
judging_criteria: Weigh each argument's logic.
"""

QUESTIONS = [
    {"passage": "The ferry left at dawn. Only Ines knew the cargo.", "question": "Who knew the cargo?",
     "answers": ["Ines", "The captain"], "correct": 0},
    {"passage": "Pell feared sheep but chased deer.", "question": "What did Pell chase?",
     "answers": ["Sheep", "Deer"], "correct": 1},
]  # fmt: skip
RUNS = 2 * (2 + 4 + 1) * 2 * 2  # questions x (debate pairs + consultancies + blind) x orders x judges


def counts(stack, experiment_id):
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        rows = connection.execute(
            """SELECT d.status, count(*) FROM experiments_run r
               LEFT JOIN debates_debate d ON d.id = r.debate_id
               WHERE r.experiment_id = %s GROUP BY d.status""",
            [experiment_id],
        ).fetchall()
    return {status: n for status, n in rows}


def events(stack):
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        return connection.execute("SELECT count(*) FROM debates_event").fetchone()[0]


def test_an_experiment_whose_worker_is_killed_judges_every_run_once(stack, _llm_server_process, tmp_path):
    _llm_server_process.configure(latency=0.1)
    (tmp_path / "quill.yaml").write_text(JUDGE)
    (tmp_path / "set.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS))
    spec = tmp_path / "experiment.yaml"
    spec.write_text(
        "name: Crash experiment\nquestions_file: set.jsonl\nprotocols: [evidence_debate, consultancy, blind]\n"
        "debaters: [Ada Sterling, Marcus Vale]\njudges: [Judge Ines Okafor, quill.yaml]\n"
        "options: {rounds: 2, word_limit: 40}\nconcurrency: 4\n"
    )
    experiment_id = int(stack.manage("experiment", "run", str(spec), "--enqueue").stdout.strip().splitlines()[-1])
    rng = random.Random(20261124)
    kills = 0
    while kills < 4:
        # As an operator does after a crash: start the debates in flight again, before the worker starts.
        stack.manage("experiment", "resume", str(experiment_id), "--enqueue")
        worker = stack.start_worker("x", threads=6)
        before = events(stack)
        deadline = time.monotonic() + 120
        while events(stack) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.5, 2.0))
        if counts(stack, experiment_id).get("completed", 0) == RUNS:
            break
        stack.kill(worker)  # SIGKILL: no cleanup runs
        kills += 1
    assert kills == 4, "the experiment finished before it could be killed four times"
    stack.start_worker("final", threads=6)
    stack.manage("experiment", "resume", str(experiment_id), "--enqueue")
    deadline = time.monotonic() + 300
    while counts(stack, experiment_id).get("completed", 0) < RUNS:
        assert time.monotonic() < deadline, counts(stack, experiment_id)
        time.sleep(1)
    report = json.loads(stack.manage("experiment", "report", str(experiment_id), "--json").stdout)
    assert report["experiment"]["status"] == "completed"
    assert report["progress"] == {"total": RUNS, "done": RUNS, "running": 0, "failed": 0}
    # Every (question, protocol, order, judge, speakers) judged exactly once, and no debate made twice.
    seen = [
        (r["question"], r["protocol"], r["order"], r["judge"], r["argues_answer_0"], r["argues_answer_1"],
         r["consultant_answer"])
        for r in report["runs"]
    ]  # fmt: skip
    assert len(seen) == len(set(seen)) == RUNS
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        debates = connection.execute("SELECT format, count(*) FROM debates_debate GROUP BY format").fetchall()
        answers = connection.execute(
            """SELECT count(*), count(DISTINCT e.debate_id) FROM debates_event e JOIN debates_seat s ON s.id = e.seat_id
               WHERE e.kind = 'VERDICT' AND e.step = 'answer' AND s.key = 'judge'"""
        ).fetchone()
    # A debate is argued once and its second judge rereads it; each judge holds its own consultancy.
    assert dict(debates) == {
        "evidence_debate": 2 * 2 * 2,
        "evidence_judge": 2 * 2 * 2,
        "consultancy": 2 * 4 * 2 * 2,
        "blind": 2 * 2 * 2,
    }
    assert answers == (RUNS, RUNS)  # one answer a debate: none judged twice
    assert sum(j["runs"] for j in report["report"]["judges"]) == RUNS
