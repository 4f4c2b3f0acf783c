"""A comparison on Celery workers over PostgreSQL and Redis, its worker SIGKILLed again and again: every question is
run under every arm exactly once, and the report's accuracy per arm is what the scripted agents answered."""

import json
import random
import re
import time

import psycopg
import pytest

from comparisons import arithmetic
from tests.scaleout.conftest import ROOT

pytestmark = pytest.mark.scaleout

COUNT, DIFFICULTY, SEED = 4, 3, 0
QUESTIONS = arithmetic.generate(COUNT, DIFFICULTY, SEED)  # the spec's sample, drawn as the command draws it
ARMS = ["single-agent", "self-consistency", "Du et al.", "mad"]
RUNS = len(QUESTIONS) * len(ARMS)
# Each arm's prompt for an answer has words of its own (single-agent and self-consistency share theirs): the
# questions each one answers right, by index; every other answer is the gold one plus one.
PROMPTS = {
    "Think it through, then give your answer": {0, 1},  # single-agent, and each agent of self-consistency
    "Make sure to state your answer": {0, 1, 2},  # Du et al.'s first answers and its round's updates
    "As the moderator, summarise": {3},  # MAD's final answer
}
RIGHT = {"single-agent": 2, "self-consistency": 2, "Du et al.": 3, "mad": 1}
# A debate's calls: three agents at once, twice for Du et al.'s one round; MAD's two sides, then its moderator's
# answer (its check for a clear preference comes only between rounds).
CALLS = {"single-agent": 1, "self-consistency": 3, "Du et al.": 6, "mad": 3}


def answer_rules() -> list[dict]:
    rules = []
    for words, right in PROMPTS.items():
        for i, q in enumerate(QUESTIONS):
            answer = q.answer if i in right else str(int(q.answer) + 1)
            reply = json.dumps({"reasoning": "worked out", "answer": answer})
            rules.append({"match": "(?s)" + re.escape(q.question) + ".*" + re.escape(words), "reply": reply})
    return rules


def counts(db, comparison_id):
    rows = db.execute(
        """SELECT d.status, count(*) FROM comparisons_run r
           LEFT JOIN debates_debate d ON d.id = r.debate_id
           WHERE r.comparison_id = %s GROUP BY d.status""",
        [comparison_id],
    ).fetchall()
    return {status: n for status, n in rows}


def events(db):
    return db.execute("SELECT count(*) FROM debates_event").fetchone()[0]


def test_a_comparison_whose_worker_is_killed_runs_every_question_under_every_arm_once(
    stack, _llm_server_process, tmp_path
):
    _llm_server_process.configure(latency=0.3, rules=answer_rules())
    spec = tmp_path / "comparison.yaml"
    spec.write_text(
        f"name: Crash comparison\nsample: arithmetic\ncount: {COUNT}\ndifficulty: {DIFFICULTY}\nseed: {SEED}\n"
        "persona: Ada Sterling\n"
        "arms:\n  - {format: single-agent}\n  - {format: self-consistency, agents: 3}\n"
        "  - {format: multi-agent-debate, name: Du et al., agents: 3, options: {rounds: 1}}\n"
        "  - {format: mad, options: {rounds: 1}}\nconcurrency: 4\n"
    )
    # The shipped cards imported and the comparison enqueued in one Django start-up (a second costs seconds here).
    code = (
        "from django.core.management import call_command\n"
        f"call_command('import_formats', {str(ROOT / 'cards')!r}, verbosity=0)\n"
        f"call_command('comparison', 'run', {str(spec)!r}, '--enqueue')"
    )
    comparison_id = int(stack.manage("shell", "-c", code).stdout.strip().splitlines()[-1])
    # One connection for every look: a new one each 50 ms is a PostgreSQL backend forked each time on 2 cores.
    db = psycopg.connect(stack.env["DATABASE_URL"], autocommit=True)
    rng = random.Random(20261202)
    kills = 0
    while kills < 3:
        if kills:
            # As an operator does after a crash: start the debates in flight again, before the worker starts.
            stack.manage("comparison", "resume", str(comparison_id), "--enqueue")
        worker = stack.start_worker("c", threads=6)
        before = events(db)
        deadline = time.monotonic() + 120
        while events(db) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.5, 2.0))
        if counts(db, comparison_id).get("completed", 0) == RUNS:
            break
        stack.kill(worker)  # SIGKILL: no cleanup runs
        kills += 1
    assert kills == 3, "the comparison finished before it could be killed three times"
    stack.start_worker("final", threads=6)
    stack.manage("comparison", "resume", str(comparison_id), "--enqueue")
    deadline = time.monotonic() + 120
    while counts(db, comparison_id).get("completed", 0) < RUNS:
        assert time.monotonic() < deadline, counts(db, comparison_id)
        time.sleep(0.5)
    report = json.loads(stack.manage("comparison", "report", str(comparison_id), "--json").stdout)
    assert report["comparison"]["status"] == "completed"
    assert report["progress"] == {"total": RUNS, "done": RUNS, "running": 0, "failed": 0}
    seen = [(r["question"], r["arm"]) for r in report["runs"]]
    assert len(seen) == len(set(seen)) == RUNS
    debates = db.execute("SELECT format, count(*) FROM debates_debate GROUP BY format").fetchall()
    linked = db.execute(
        "SELECT count(DISTINCT debate_id) FROM comparisons_run WHERE comparison_id = %s", [comparison_id]
    ).fetchone()[0]
    db.close()
    # One debate a question and arm, none left over from a killed pass: every one is a run's.
    n = len(QUESTIONS)
    assert dict(debates) == {"single-agent": n, "self-consistency": n, "multi-agent-debate": n, "mad": n}
    assert linked == RUNS
    arms = {a["arm"]: a for a in report["report"]["arms"]}
    assert list(arms) == ARMS
    assert {name: (a["questions"], a["correct"]) for name, a in arms.items()} == {
        name: (n, right) for name, right in RIGHT.items()
    }
    # A debate restarted after a kill keeps no call of its killed pass: each arm made its calls once a question.
    assert {name: a["calls"]["total"] for name, a in arms.items()} == {name: n * c for name, c in CALLS.items()}
    assert {name: a["accuracy"]["value"] for name, a in arms.items()} == {
        name: pytest.approx(right / n) for name, right in RIGHT.items()
    }
