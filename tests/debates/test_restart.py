"""A restart does not strand a running debate: the server (`manage.py runserver`, a real subprocess) is stopped in
the middle of a duel by SIGINT (Ctrl-C), SIGTERM or SIGKILL, and started again at once; the new server knows the
old process is gone (the debate records who runs it), resumes the debate within seconds whatever its age, and it
completes exactly once: every step stored once, one verdict. A command-line debate stopped by SIGTERM is left
resumable and says so, as Ctrl-C does."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.servers import ROOT, _wait_until_serving, free_port, manage

TOPIC = "Should cities ban cars?"


@pytest.fixture(scope="session")
def site_template(tmp_path_factory, _llm_server_process):
    """A migrated database with the sample personas and an owner, and that owner's API token: made once, copied
    for each test."""
    folder = tmp_path_factory.mktemp("restart-site")
    env = site_env(folder / "site.sqlite3", _llm_server_process.url, folder)
    manage(env, "migrate", "--noinput")
    manage(env, "import_personas", "personas/")
    token = manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from api.tokens import create_token; "
        "print(create_token(User.objects.create_user('rhea', password='pw-rhea-123'), 't', read_only=False)[1])",
    ).split()[-1]
    return folder / "site.sqlite3", token


def site_env(database: Path, llm_url: str, folder: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "restart-tests",
        "CHAOSLM_DEFAULT_MODEL": "test-model",
        "CHAOSLM_TRANSCRIPTS_DIR": str(folder / "transcripts"),
        "CHAOSLM_LLM_TIMEOUT": "10",
        "CHAOSLM_LOG_LEVEL": "WARNING",
        "CHAOSLM_STARTS_PER_MINUTE": "1000",
    }


@pytest.fixture
def site(site_template, tmp_path, _llm_server_process):
    """A fresh site's environment, its database file, and an API token of its owner."""
    _llm_server_process.reset()
    template, token = site_template
    database = tmp_path / "site.sqlite3"
    shutil.copyfile(template, database)
    return site_env(database, _llm_server_process.url, tmp_path), database, token


def serve(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
    )
    _wait_until_serving(f"http://127.0.0.1:{port}")
    return process


def rows(database: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(database, timeout=10) as connection:
        return connection.execute(sql, args).fetchall()


def wait_for(condition, timeout: float, what: str) -> float:
    """Seconds until `condition()` held."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, what
        time.sleep(0.1)
    return time.monotonic() - started


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_debate_left_running_by_a_stopped_server_is_resumed_by_the_next_start_and_completes_once(
    site, _llm_server_process, tmp_path, stop
):
    env, database, token = site
    _llm_server_process.configure(latency=0.4, reply_words=12)
    port = free_port()
    log = tmp_path / "server.log"
    server = serve(env, port, log)
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as client:
            names = {p["name"]: p["id"] for p in client.get("/personas").json()}
            reply = client.post(
                "/debates",
                json={
                    "topic": TOPIC,
                    "seats": {
                        "a": names["Ada Sterling"],
                        "b": names["Marcus Vale"],
                        "judge": names["Judge Ines Okafor"],
                    },
                    "options": {"turns": 4},
                },
            )
            assert reply.status_code == 201, reply.text
            debate_id = reply.json()["id"]
        # Stopped mid-debate: once its first statement is stored.
        turns = "SELECT count(*) FROM debates_event WHERE debate_id = ? AND kind = 'TURN'"
        wait_for(lambda: rows(database, turns, debate_id)[0][0] >= 1, 60, "the debate never got going")
    finally:
        server.send_signal(stop)
        server.wait(20)
    status = "SELECT status FROM debates_debate WHERE id = ?"
    assert rows(database, status, debate_id) == [("running",)]  # as the old process left it
    server = serve(env, port, log)
    try:
        took = wait_for(lambda: rows(database, status, debate_id) == [("completed",)], 90, "never completed")
    finally:
        server.terminate()
        server.wait(20)
    assert took < 60
    ordinals = [o for (o,) in rows(database, "SELECT ordinal FROM debates_event WHERE debate_id = ?", debate_id)]
    assert len(ordinals) == len(set(ordinals))
    kinds = [k for (k,) in rows(database, "SELECT kind FROM debates_event WHERE debate_id = ?", debate_id)]
    assert kinds.count("VERDICT") == 1 and kinds.count("TURN") == 4 and "ERROR" not in kinds


def test_a_command_line_debate_stopped_by_sigterm_is_left_resumable_and_says_so(site, _llm_server_process):
    env, database, _ = site
    _llm_server_process.configure(latency=0.4, reply_words=12)
    command = subprocess.Popen(
        [sys.executable, "manage.py", "debate", "duel", "--topic", TOPIC, "--a", "Ada Sterling", "--b", "Marcus Vale",
         "--turns", "4", "--owner", "rhea"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        turns = "SELECT count(*) FROM debates_event WHERE kind = 'TURN'"
        wait_for(lambda: rows(database, turns)[0][0] >= 1, 60, "the debate never got going")
    finally:
        command.send_signal(signal.SIGTERM)
        _, err = command.communicate(timeout=30)
    ((debate_id, status),) = rows(database, "SELECT id, status FROM debates_debate")
    assert status == "interrupted"
    assert command.returncode == 130
    assert err.strip().endswith(f"Stopped. Resume with: uv run python manage.py debate --resume {debate_id}"), err
