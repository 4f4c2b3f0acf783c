"""An experiment running on Celery workers over PostgreSQL and Redis, deleted: the debates in flight on the workers
find their rows gone and stop at their next write, the tick chain stops, no further call reaches the model and
no traceback is logged; nothing of the experiment is left."""

import json
import time

import psycopg
import pytest

from tests.scaleout.test_experiment_crash import QUESTIONS

pytestmark = pytest.mark.scaleout


def query(stack, sql, params=()):
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        return connection.execute(sql, params).fetchall()


def test_deleting_an_experiment_running_on_workers_stops_it_quietly(stack, _llm_server_process, tmp_path):
    server = _llm_server_process
    server.configure(latency=0.2, token_rate=50, reply_words=20)
    (tmp_path / "set.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS))
    spec = tmp_path / "experiment.yaml"
    spec.write_text(
        "name: Doomed on workers\nquestions_file: set.jsonl\nprotocols: [evidence_debate, blind]\n"
        "debaters: [Ada Sterling, Marcus Vale]\njudges: [Judge Ines Okafor]\n"
        "options: {rounds: 3, word_limit: 40}\nconcurrency: 4\n"
    )
    experiment_id = int(stack.manage("experiment", "run", str(spec), "--enqueue").stdout.strip().splitlines()[-1])
    stack.start_worker("d", threads=4)
    mine = """SELECT count(*) FROM debates_event e JOIN experiments_run r ON r.debate_id = e.debate_id
              WHERE r.experiment_id = %s AND e.kind = 'TURN'"""
    deadline = time.monotonic() + 120
    while query(stack, mine, [experiment_id])[0][0] < 2:
        assert time.monotonic() < deadline, "the experiment's debates did not start speaking"
        time.sleep(0.05)
    debate_ids = [
        row[0]
        for row in query(stack, "SELECT debate_id FROM experiments_run WHERE experiment_id = %s", [experiment_id])
        if row[0] is not None
    ]
    assert query(stack, "SELECT count(*) FROM debates_debate WHERE id = ANY(%s) AND status = 'running'", [debate_ids])

    code = (
        "from experiments import work\nfrom experiments.models import Experiment\n"
        f"work.EXPERIMENT.delete(Experiment.objects.get(pk={experiment_id}))"
    )
    stack.manage("shell", "-c", code)

    time.sleep(1.5)  # the calls already on their way when it was deleted land, and their debates stop
    before = len(server.requests)
    time.sleep(3)  # longer than a tick (CHAOSLM_BATCH_TICK): a tick chain still going would start debates
    assert len(server.requests) == before
    assert query(stack, "SELECT count(*) FROM experiments_experiment WHERE id = %s", [experiment_id]) == [(0,)]
    assert query(stack, "SELECT count(*) FROM experiments_run WHERE experiment_id = %s", [experiment_id]) == [(0,)]
    assert query(stack, "SELECT count(*) FROM debates_debate WHERE id = ANY(%s)", [debate_ids]) == [(0,)]
    assert query(stack, "SELECT count(*) FROM debates_event WHERE debate_id = ANY(%s)", [debate_ids]) == [(0,)]
    logs = "".join(path.read_text() for path in tmp_path.glob("worker-*.log"))
    assert "ready." in logs and "batches.tasks.advance_batch" in logs  # the worker's own log, and it ran
    assert "Traceback" not in logs and "ERROR" not in logs, logs[-3000:]
