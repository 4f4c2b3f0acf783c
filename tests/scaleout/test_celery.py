"""Debates on Celery workers over PostgreSQL and Redis: crash safety (the faults soak is in test_celery_faults.py)."""

import random
import time

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
