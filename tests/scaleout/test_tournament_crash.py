"""A tournament on Celery workers over PostgreSQL and Redis, its worker SIGKILLed again and again."""

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


def counts(stack, tournament_id):
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        rows = connection.execute(
            """SELECT d.status, count(*) FROM tournaments_judgment j
               JOIN tournaments_match m ON m.id = j.match_id
               LEFT JOIN debates_debate d ON d.id = j.debate_id
               WHERE m.tournament_id = %s GROUP BY d.status""",
            [tournament_id],
        ).fetchall()
    return {status: n for status, n in rows}


def events(stack):
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        return connection.execute("SELECT count(*) FROM debates_event").fetchone()[0]


def test_a_tournament_whose_worker_is_killed_finishes_with_every_match_judged_once_per_judge_and_repeat(
    stack, _llm_server_process, tmp_path
):
    _llm_server_process.configure(latency=0.15)
    (tmp_path / "quill.yaml").write_text(JUDGE)
    spec = tmp_path / "league.yaml"
    spec.write_text(
        "name: Crash league\noptions: {turns: 2}\ndebaters: [Ada Sterling, Marcus Vale]\n"
        "judges: [Judge Ines Okafor, quill.yaml]\nrepeats: 2\nconcurrency: 4\n"
        "questions: [Is crash safety free, Should cities ban cars, Is tea better than coffee]\n"
    )
    tournament_id = int(stack.manage("tournament", "run", str(spec), "--enqueue").stdout.strip().splitlines()[-1])
    # 3 questions x 2 sides = 6 duels; 2 judges x 2 repeats = 4 verdicts a duel, one inside it: 18 replays.
    rng = random.Random(20261122)
    kills = 0
    while kills < 5:
        # What an operator (or the beat sweep, later) does after a crash: start the debates in flight again.
        # Before the worker starts, so that a slow manage.py start-up on a busy machine cannot let the worker
        # run the whole tournament before the first look (it did: kills == 0).
        stack.manage("tournament", "resume", str(tournament_id), "--enqueue")
        worker = stack.start_worker("t", threads=6)
        # Killed only once it is at work, however long it takes to start, then at a random point.
        before = events(stack)
        deadline = time.monotonic() + 120
        while events(stack) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.5, 2.0))
        if counts(stack, tournament_id).get("completed", 0) == 24:
            break
        stack.kill(worker)  # SIGKILL: no cleanup runs
        kills += 1
    assert kills == 5, "the tournament finished before it could be killed five times"
    stack.start_worker("final", threads=6)
    stack.manage("tournament", "resume", str(tournament_id), "--enqueue")
    deadline = time.monotonic() + 240
    while counts(stack, tournament_id).get("completed", 0) < 24:
        assert time.monotonic() < deadline, counts(stack, tournament_id)
        time.sleep(1)
    report = json.loads(stack.manage("tournament", "report", str(tournament_id), "--json").stdout)
    assert report["tournament"]["status"] == "completed"
    assert report["progress"] == {"total": 24, "done": 24, "running": 0, "failed": 0}
    # Every match judged exactly once per judge and repeat, and no debate made twice.
    seen = [(m["match"], j["judge"], j["repeat"]) for m in report["matches"] for j in m["judgments"]]
    assert len(seen) == len(set(seen)) == 6 * 2 * 2
    assert all(j["status"] == "completed" and j["winner"] for m in report["matches"] for j in m["judgments"])
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        formats = dict(connection.execute("SELECT format, count(*) FROM debates_debate GROUP BY format").fetchall())
    assert formats == {"duel": 6, "judge": 18}
    assert sum(j["verdicts"] for j in report["judges"]) == 24
