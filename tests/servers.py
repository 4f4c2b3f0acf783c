"""A real ChaosLM server for the tests that drive it from outside, as a person or a program would (tests/browser,
tests/api): `manage.py runserver` (daphne) in a subprocess on a free port, its log kept in test-artifacts/."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.conftest import XDIST_WORKER

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_manage(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a `manage.py` command in a new process (with `env`, else this one's environment), however it ends."""
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def manage(env: dict[str, str], *args: str) -> str:
    """Run a `manage.py` command with `env`; its output (it must succeed)."""
    result = run_manage(*args, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a new Python process with the project's settings (it must succeed): what a module imports
    shows only in a process that has imported nothing yet."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
        timeout=120,
        check=True,
    )


@contextmanager
def running_site(env: dict[str, str], log_name: str) -> Iterator[str]:
    """A ChaosLM server with `env`, serving until the block ends; its base URL. Its log, kept for reading when a
    test fails, is test-artifacts/<log_name>.log, one per xdist worker (each runs its own server)."""
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / f"{log_name}{'' if XDIST_WORKER is None else f'-gw{XDIST_WORKER}'}.log").open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_until_serving(base)
            yield base
        finally:
            process.terminate()
            process.wait(10)


def _wait_until_serving(base: str) -> None:
    for _ in range(150):
        try:
            if httpx.get(base + "/", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    pytest.fail("the ChaosLM server did not start")
