"""Scale-out tests: real PostgreSQL, real Redis, real Celery worker processes, real daphne.

They need CHAOSLM_TEST_DATABASE_URL (a role that may create databases) and CHAOSLM_TEST_REDIS_URL;
`eval "$(bin/start-services)"` starts both from Debian's packages. Without them the tests skip,
except under CI, where that is a failure.
"""

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx2 as httpx
import psycopg
import pytest

from tests.conftest import XDIST_WORKER, require
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
PERSONAS = ["Ada Sterling", "Marcus Vale", "Judge Ines Okafor"]


class Stack:
    """One isolated ChaosLM deployment: its own database and Redis database, and its processes."""

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        self.env = env
        self.log_dir = log_dir
        self.workers: list[subprocess.Popen] = []

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300
        )
        if check:
            assert result.returncode == 0, result.stderr + result.stdout
        return result

    def start_worker(self, name: str = "w", threads: int = 0) -> subprocess.Popen:
        """A worker: one process (solo pool, so SIGKILL takes all of it down at once), or `threads` threads."""
        log = (self.log_dir / f"worker-{name}-{len(self.workers)}.log").open("w")
        pool = ["--pool", "threads", "--concurrency", str(threads)] if threads else ["--pool", "solo"]
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            *pool,
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "-n",
            f"{name}{len(self.workers)}@%h",
        ]
        process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.workers.append(process)
        return process

    @staticmethod
    def kill(process: subprocess.Popen) -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)

    def start_web(self, port: int | None = None) -> str:
        """A daphne web process on this deployment; returns its base URL."""
        port = port or free_port()
        log = (self.log_dir / f"web-{len(self.workers)}.log").open("w")
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.workers.append(process)
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                if httpx.get(base + "/", timeout=1).status_code == 200:
                    return base
            except httpx.HTTPError:
                time.sleep(0.2)
        raise AssertionError("the web process did not start")

    def stop_all(self) -> None:
        for process in self.workers:
            self.kill(process)

    def enqueue_duel(self, topic: str, turns: int = 6) -> int:
        result = self.manage(*self._duel_command(topic, turns))
        return int(result.stdout.strip().splitlines()[-1])

    def enqueue_duels(self, topics: list[str], turns: int = 6) -> list[int]:
        """`enqueue_duel` for each topic, the same command run in one `manage.py shell`: one Django start-up
        for all of them rather than one each."""
        commands = [self._duel_command(topic, turns) for topic in topics]
        code = f"from django.core.management import call_command\nfor c in {commands!r}:\n    call_command(*c)"
        # Each command prints its debate's id on a line of its own (shell may print a line of its own first).
        lines = self.manage("shell", "-c", code).stdout.splitlines()
        return [int(line) for line in lines if line.strip().isdigit()]

    @staticmethod
    def _duel_command(topic: str, turns: int) -> list[str]:
        return [
            "debate",
            "duel",
            "--topic",
            topic,
            "--premise",
            "The premise holds",
            "--turns",
            str(turns),
            "--a",
            PERSONAS[0],
            "--b",
            PERSONAS[1],
            "--judge",
            PERSONAS[2],
            "--enqueue",
            "--visibility",
            "public",
        ]

    def transcript(self, debate_id: int) -> dict:
        return json.loads(self.manage("export_transcript", str(debate_id), "--format", "json").stdout)

    def wait_done(self, debate_id: int, timeout: float = 120) -> dict:
        # The status is read from the database directly: a manage.py per look would start Django each time.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with psycopg.connect(self.env["DATABASE_URL"]) as connection:
                row = connection.execute("SELECT status FROM debates_debate WHERE id = %s", [debate_id]).fetchone()
            if row and row[0] in ("completed", "error"):
                return self.transcript(debate_id)
            time.sleep(0.2)
        raise AssertionError(f"debate {debate_id} did not finish in {timeout}s")


def _database(base_url: str, template: str | None = None) -> tuple[str, str]:
    """A fresh database on the test server, a copy of `template` if given: (its URL, its name)."""
    name = f"chaoslm_test_{secrets.token_hex(4)}"
    parts = urlsplit(base_url)
    with psycopg.connect(base_url, autocommit=True) as connection:
        for attempt in range(50):
            try:
                connection.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
                break
            except psycopg.errors.ObjectInUse:
                # The template's last session (the manage.py that filled it) may still be closing.
                if attempt == 49:
                    raise
                time.sleep(0.1)
    return urlunsplit(parts._replace(path=f"/{name}")), name


@pytest.fixture(scope="session")
def _migrated_template(_llm_server_process, tmp_path_factory):
    """A database migrated and holding the sample personas once per session; each stack starts as a copy,
    which takes a fraction of a second where `migrate` and `import_personas` take many."""
    db_url = os.environ.get("CHAOSLM_TEST_DATABASE_URL", "")
    redis_url = os.environ.get("CHAOSLM_TEST_REDIS_URL", "")
    require(bool(db_url and redis_url), "PostgreSQL and Redis (CHAOSLM_TEST_DATABASE_URL, CHAOSLM_TEST_REDIS_URL)")
    database_url, name = _database(db_url)
    env = {**os.environ, "DATABASE_URL": database_url, "OPENAI_BASE_URL": _llm_server_process.url}
    env.pop("REDIS_URL", None)
    env.pop("CHAOSLM_RUNNER", None)
    template = Stack(env, tmp_path_factory.mktemp("template"))
    template.manage("migrate", "--noinput")
    template.manage("import_personas", "personas/samples/")
    yield name
    with psycopg.connect(db_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def stack(_llm_server_process, _migrated_template, tmp_path):
    db_url = os.environ["CHAOSLM_TEST_DATABASE_URL"]
    redis_url = os.environ["CHAOSLM_TEST_REDIS_URL"]
    database_url, name = _database(db_url, template=_migrated_template)
    # A Redis database of this deployment's own: 0 is the PostgreSQL engine run's, 15 the concurrency
    # bench's. Parallel xdist workers must not share one (each flushes it); alone, a random pick keeps
    # clear of another checkout's run on the same Redis.
    # CHAOSLM_TEST_REDIS_URL naming a database of its own (not 0) is used as given when one process runs the
    # tests: engineers sharing one Redis each name theirs, and a random pick could land on another's.
    given = urlsplit(redis_url).path.strip("/")
    if XDIST_WORKER is None and given.isdigit() and given != "0":
        redis_db = int(given)
    else:
        redis_db = 1 + XDIST_WORKER % 14 if XDIST_WORKER is not None else secrets.randbelow(14) + 1
    _llm_server_process.reset()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": f"{redis_url.rsplit('/', 1)[0]}/{redis_db}",
        "CHAOSLM_RUNNER": "celery",
        # The default layer, whatever the shell running the tests exports: every scale-out test runs on it.
        "CHAOSLM_CHANNEL_LAYER": "pubsub",
        "OPENAI_BASE_URL": _llm_server_process.url,
        "OPENAI_API_KEY": "scaleout",
        "CHAOSLM_DEFAULT_MODEL": "test-model",
        "CHAOSLM_TRANSCRIPTS_DIR": str(tmp_path / "transcripts"),
        "CHAOSLM_LLM_TIMEOUT": "2",
        "CHAOSLM_LLM_BACKOFF": "0.05",
        "CHAOSLM_LOG_LEVEL": "WARNING",
    }
    deployment = Stack(env, tmp_path)
    subprocess.run(["redis-cli", "-u", env["REDIS_URL"], "flushdb"], check=False, capture_output=True)
    yield deployment
    deployment.stop_all()
    with psycopg.connect(db_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
