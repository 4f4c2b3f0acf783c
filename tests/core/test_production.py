"""Production settings and the recovery sweep."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from chaoslm.runner import inline
from debates.models import Debate, Event
from debates.recovery import recover, stalled_debates
from debates.setup import SeatChoice, create_debate
from personas.models import import_personas
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "CHAOSLM_DEBUG": "false",
    "CHAOSLM_SECRET_KEY": "a-long-random-production-secret-key-0123456789-abcdefghijklmnop",
    "CHAOSLM_ALLOWED_HOSTS": "chaoslm.example.org",
    "CHAOSLM_HSTS_SECONDS": "31536000",
    "CHAOSLM_HSTS_PRELOAD": "true",
}


def manage(*args, **env):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def test_check_deploy_passes_with_the_documented_production_variables():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    result = manage("check", **{**PRODUCTION, "CHAOSLM_SECRET_KEY": ""})
    assert result.returncode != 0 and "CHAOSLM_SECRET_KEY must be set" in result.stderr


def test_the_celery_runner_refuses_the_in_memory_channel_layer():
    result = manage("check", CHAOSLM_RUNNER="celery", REDIS_URL="")
    assert result.returncode != 0
    assert "CHAOSLM_RUNNER=celery needs REDIS_URL" in result.stderr


def test_a_database_pool_refuses_persistent_connections_with_a_message():
    result = manage(
        "check",
        DATABASE_URL="postgres://chaoslm:chaoslm@127.0.0.1:5432/chaoslm",
        CHAOSLM_DB_POOL_SIZE="5",
        CHAOSLM_DB_CONN_MAX_AGE="600",
    )
    assert result.returncode != 0
    assert "CHAOSLM_DB_POOL_SIZE needs CHAOSLM_DB_CONN_MAX_AGE=0" in result.stderr


def test_with_a_pool_size_postgresql_queries_go_through_a_pool_of_that_size():
    database_url = os.environ.get("CHAOSLM_TEST_DATABASE_URL", "")
    require(bool(database_url), "PostgreSQL (CHAOSLM_TEST_DATABASE_URL)")
    ask = (
        "from django.db import connection; connection.cursor().execute('SELECT 1'); "
        "print(type(connection.pool).__name__, connection.pool.max_size)"
    )
    result = manage("shell", "-v", "0", "-c", ask, DATABASE_URL=database_url, CHAOSLM_DB_POOL_SIZE="7")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ConnectionPool", "7"]


@pytest.mark.django_db(transaction=True)
def test_the_sweep_resumes_a_debate_whose_work_stopped(llm_server):
    a, b = import_personas([(f"{n}.yaml", f"name: {n}\nrole: debater\npersonality: {n}.\n") for n in ("Ann", "Ben")])
    debate = create_debate(
        format_name="duel", topic="Tea?", seats={"a": SeatChoice(a), "b": SeatChoice(b)}, options={"turns": 2}
    )
    fresh = create_debate(
        format_name="duel", topic="Coffee?", seats={"a": SeatChoice(a), "b": SeatChoice(b)}, options={"turns": 2}
    )
    long_ago = timezone.now() - timedelta(minutes=30)
    # A worker died after the header: status still says running, and nothing happened for half an hour.
    Debate.objects.filter(pk=debate.pk).update(status="running", started_at=long_ago)
    Event.objects.create(debate=debate, ordinal=0, kind="HEADER", content="Tea?")
    Event.objects.filter(debate=debate).update(created_at=long_ago)
    Debate.objects.filter(pk=fresh.pk).update(status="running", started_at=timezone.now())
    assert [d.pk for d in stalled_debates(older_than=600)] == [debate.pk]
    assert recover(older_than=600) == [debate.pk]
    inline.wait_idle()
    debate.refresh_from_db()
    assert debate.status == Debate.Status.COMPLETED
    assert Event.objects.filter(debate=debate).count() == 1 + 2 + 2 + 2  # header, plans, opening pair, reply pair
