"""Debates on Celery workers over PostgreSQL and Redis: crash safety and faults."""

import random
import time
from pathlib import Path

import httpx2 as httpx
import psycopg
import pytest

pytestmark = pytest.mark.scaleout


def progress(stack, debate_id):
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        count = connection.execute("SELECT count(*) FROM debates_event WHERE debate_id = %s", [debate_id]).fetchone()
        status = connection.execute("SELECT status FROM debates_debate WHERE id = %s", [debate_id]).fetchone()
    return count[0], status[0]


def comparable(data):
    return [(e["ordinal"], e["kind"], e["step"], e["seat"], e["content"]) for e in data["events"]]


def test_a_duel_whose_worker_is_killed_ten_times_ends_exactly_as_an_uninterrupted_one(stack, _llm_server_process):
    _llm_server_process.configure(latency=0.3)
    reference_id = stack.enqueue_duel("Is crash safety free?")
    worker = stack.start_worker("ref")
    reference = stack.wait_done(reference_id)
    stack.kill(worker)
    assert reference["status"] == "completed" and len(reference["events"]) == 31

    debate_id = stack.enqueue_duel("Is crash safety free?")
    rng = random.Random(20261121)
    kills = 0
    while kills < 10:
        # What the beat sweep does for a stalled debate; before the worker starts, so that a slow manage.py
        # start-up on a busy machine cannot let the worker run the whole debate before the first look.
        stack.manage("recover_debates", "--older-than", "0")
        worker = stack.start_worker()
        start, status = progress(stack, debate_id)
        target = start + rng.randint(1, 2)
        deadline = time.monotonic() + 30
        while status != "completed" and progress(stack, debate_id)[0] < target and time.monotonic() < deadline:
            time.sleep(rng.uniform(0.02, 0.3))
            status = progress(stack, debate_id)[1]
        if status == "completed":
            break
        stack.kill(worker)  # SIGKILL, mid-debate: no cleanup runs
        kills += 1
    assert kills == 10, "the debate finished before it could be killed ten times"
    stack.start_worker("final")
    stack.manage("recover_debates", "--older-than", "0")
    finished = stack.wait_done(debate_id)
    assert finished["status"] == "completed"
    assert comparable(finished) == comparable(reference)  # nothing lost, nothing doubled
    assert finished["verdict"] == reference["verdict"]


def test_twenty_debates_under_faults_all_end_and_the_web_never_fails(stack, _llm_server_process):
    stack.env["CHAOSLM_LLM_TIMEOUT"] = "0.6"
    _llm_server_process.configure(
        latency=0.02, hang_seconds=5, seed=3, fault_rates={"500": 0.2, "hang": 0.1, "malformed_json": 0.1}
    )
    base = stack.start_web()
    for name in ("a", "b"):
        stack.start_worker(name, threads=6)
    ids = [stack.enqueue_duel(f"Soak {i}", turns=2) for i in range(20)]
    statuses = []
    deadline = time.monotonic() + 240
    with httpx.Client(timeout=10) as client:
        while time.monotonic() < deadline:
            for debate_id in ids:
                for path in ("/", f"/debates/{debate_id}/", f"/debates/{debate_id}/export.json"):
                    response = client.get(base + path)
                    assert response.status_code == 200, (path, response.status_code)
            statuses = [progress(stack, i)[1] for i in ids]
            if all(s in ("completed", "error") for s in statuses):
                break
            time.sleep(0.5)
    assert all(s in ("completed", "error") for s in statuses), statuses
    folder = stack.env["CHAOSLM_TRANSCRIPTS_DIR"]
    for debate_id, status in zip(ids, statuses, strict=True):
        if status == "error":
            data = stack.transcript(debate_id)
            assert data["error"] and any(e["kind"] == "ERROR" for e in data["events"])
            assert (Path(folder) / f"partial-{debate_id}.md").exists()
    assert "completed" in statuses and "error" in statuses  # the faults bit, and the retries held
