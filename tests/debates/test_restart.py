"""A restart does not strand a running debate: the server (`manage.py runserver`, a real subprocess) is stopped in
the middle of a duel by SIGINT (Ctrl-C), SIGTERM or SIGKILL, and started again at once; the new server knows the
old process is gone (the debate records who runs it), resumes the debate within seconds whatever its age, and it
completes exactly once: every step stored once, one verdict. A command stopped by Ctrl-C or SIGTERM (SIGINT ignored
or not) stops the work it started, makes no call after, and says so in one plain line: a debate is left
resumable, a tournament paused, so that a running server's sweep does not carry it on."""

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
    manage(env, "import_personas", "personas/samples/")
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


def ignore_sigint() -> None:
    """As a shell's `cmd &` in a script, or nohup, starts a command: SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def calls_after(server, moment: float) -> list:
    return [r for r in list(server.requests) if r.started > moment]


@pytest.mark.parametrize(
    ("stop", "sigint_ignored", "said", "status"),
    [
        (signal.SIGINT, False, "Ctrl-C", 130),
        (signal.SIGTERM, False, "SIGTERM", 143),
        (signal.SIGTERM, True, "SIGTERM", 143),
    ],
    ids=["ctrl-c", "sigterm", "sigterm-with-sigint-ignored"],
)
def test_a_command_line_debate_stopped_by_a_signal_stops_is_left_resumable_and_says_so_in_one_plain_line(
    site, _llm_server_process, stop, sigint_ignored, said, status
):
    env, database, _ = site
    _llm_server_process.configure(latency=0.4, reply_words=12)
    command = subprocess.Popen(
        [sys.executable, "manage.py", "debate", "duel", "--topic", TOPIC, "--a", "Ada Sterling", "--b", "Marcus Vale",
         "--turns", "4", "--owner", "rhea"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=ignore_sigint if sigint_ignored else None,
    )  # fmt: skip
    try:
        turns = "SELECT count(*) FROM debates_event WHERE kind = 'TURN'"
        wait_for(lambda: rows(database, turns)[0][0] >= 1, 60, "the debate never got going")
    finally:
        command.send_signal(stop)
        _, err = command.communicate(timeout=30)
    stopped = time.monotonic()
    ((debate_id, state),) = rows(database, "SELECT id, status FROM debates_debate")
    assert state == "interrupted"
    assert command.returncode == status
    assert err.strip().splitlines()[-1] == (
        f"Stopped ({said}): debate {debate_id} waits, what it said kept. "
        f"Resume it with: uv run python manage.py debate --resume {debate_id}"
    ), err
    assert "CommandError" not in err and "Traceback" not in err
    time.sleep(1)
    assert calls_after(_llm_server_process, stopped) == []
    # What landed is whole: one event an ordinal, no error in the transcript.
    ordinals = [o for (o,) in rows(database, "SELECT ordinal FROM debates_event WHERE debate_id = ?", debate_id)]
    assert len(ordinals) == len(set(ordinals))
    assert rows(database, "SELECT count(*) FROM debates_event WHERE kind = 'ERROR'") == [(0,)]


LEAGUE = """name: Stopped league
options: {turns: 2}
debaters: [Ada Sterling, Marcus Vale]
judges: [Judge Ines Okafor]
questions:
  - Should cities ban cars?
  - Is tea better than coffee?
concurrency: 2
"""


def test_ctrl_c_on_tournament_run_pauses_what_it_started_so_a_running_server_does_not_carry_it_on(
    site, _llm_server_process, tmp_path
):
    env, database, _ = site
    env = {**env, "CHAOSLM_SWEEP_EVERY": "1"}  # the server beside it looks for stranded work every second
    _llm_server_process.configure(latency=0.4, reply_words=12)
    spec = tmp_path / "league.yaml"
    spec.write_text(LEAGUE)
    server = serve(env, free_port(), tmp_path / "server.log")
    try:
        command = subprocess.Popen(
            [sys.executable, "manage.py", "tournament", "run", str(spec), "--owner", "rhea"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            turns = "SELECT count(*) FROM debates_event WHERE kind = 'TURN'"
            wait_for(lambda: rows(database, turns)[0][0] >= 2, 60, "the tournament never got going")
        finally:
            command.send_signal(signal.SIGINT)
            _, err = command.communicate(timeout=30)
        stopped = time.monotonic()
        time.sleep(4)  # four of the server's sweeps
        assert calls_after(_llm_server_process, stopped) == []
    finally:
        server.terminate()
        server.wait(20)
    ((tournament_id, state),) = rows(database, "SELECT id, status FROM tournaments_tournament")
    assert state == "paused"
    assert command.returncode == 130
    assert err.strip().splitlines()[-1] == (
        f"Stopped (Ctrl-C): tournament {tournament_id} is paused: its debates in flight stop, nothing more runs. "
        f"Go on with: uv run python manage.py tournament resume {tournament_id}"
    ), err
    assert "CommandError" not in err and "Traceback" not in err
    statuses = {s for (s,) in rows(database, "SELECT status FROM debates_debate")}
    assert statuses == {"interrupted"}
    assert rows(database, "SELECT count(*) FROM debates_event WHERE kind = 'ERROR'") == [(0,)]
    # `tournament resume` goes on with it: every match completes, each step stored once.
    _llm_server_process.configure(latency=0.0)
    resumed = subprocess.run(
        [sys.executable, "manage.py", "tournament", "resume", str(tournament_id)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert rows(database, "SELECT status FROM tournaments_tournament") == [("completed",)]
    assert {s for (s,) in rows(database, "SELECT status FROM debates_debate")} == {"completed"}
    pairs = rows(database, "SELECT debate_id, ordinal FROM debates_event")
    assert len(pairs) == len(set(pairs))


@pytest.mark.django_db(transaction=True)
def test_end_and_retry_act_on_a_debate_whose_runner_is_gone(people, llm_server):
    """A debate still "running" in a process that has ended: Retry runs it (no 409 "this one is running"), End
    brings it to a close; one whose runner is alive is left to it."""
    from chaoslm import runner
    from debates import services
    from debates.models import Debate
    from debates.setup import SeatChoice, create_debate
    from personas.models import import_personas

    files = ["ada-sterling.yaml", "marcus-vale.yaml"]
    saved = {p.name: p for p in import_personas([(f, (ROOT / "personas" / "samples" / f).read_text()) for f in files])}
    owner = people["owner"]

    def left_running(by: str) -> Debate:
        seats = {"a": SeatChoice(persona=saved["Ada Sterling"]), "b": SeatChoice(persona=saved["Marcus Vale"])}
        debate = create_debate(format_name="duel", topic=TOPIC, seats=seats, options={"turns": 2}, owner=owner)
        Debate.objects.filter(pk=debate.pk).update(status="running", runner=by)
        return Debate.objects.get(pk=debate.pk)

    gone = runner.identity().rsplit(":", 2)[0] + ":999999999:1"  # this host, a pid no process has
    assert runner.gone(gone) is True and runner.gone(runner.identity()) is False
    retried, ended = left_running(gone), left_running(gone)
    assert services.retry(owner, retried) is True
    services.end(ended)
    runner.inline.wait_idle(60)
    assert Debate.objects.get(pk=retried.pk).status == "completed"
    ended = Debate.objects.get(pk=ended.pk)
    assert ended.status == "completed" and ended.is_ending
    alive = left_running(runner.identity())
    assert services.retry(owner, alive) is False
