"""Shutting `serve` down stops the embedded model it supervises, and never leaves or adopts an orphan: a real
`serve` in its own process, its real supervisor, with the OpenAI-compatible test server as the model's command
(the one thing changed: `local_model.command`), so this runs in the fast suite."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.servers import ROOT, free_port, manage

# The model: the test server, dying at once on SIGINT or SIGTERM (a signal to the group reaches it before serve
# has begun to stop, and its supervisor sees it exit).
MODEL = "import signal, sys; from chaoslm.llm.testserver import TestLLMServer; TestLLMServer(port=int(sys.argv[1])).start(); signal.pause()"  # noqa: E501
# `manage.py serve ADDR`, the model's command line being that.
SERVE_WITH_A_TEST_MODEL = f"""
import runpy, sys
from chaoslm.llm import local_model
local_model.command = lambda port=None: [sys.executable, "-c", {MODEL!r}, str(port)]
sys.argv = ["manage.py", "serve", sys.argv[1]]
runpy.run_path("manage.py", run_name="__main__")
"""


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("serve-shutdown")
    made = folder / "template.sqlite3"
    manage({**environment(made), "CHAOSLM_LOCAL_MODEL_PORT": "1"}, "migrate", "--noinput")
    return made


def environment(database: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "DJANGO_"))}
    return env | {"DATABASE_URL": f"sqlite:///{database}", "CHAOSLM_LOG_LEVEL": "INFO"}


@pytest.fixture
def site(database, tmp_path) -> dict[str, str]:
    copy = tmp_path / "site.sqlite3"
    shutil.copyfile(database, copy)
    return environment(copy) | {"CHAOSLM_LOCAL_MODEL_PORT": str(free_port())}


def serve(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    """A `serve` in a process group of its own, as a terminal's or a service manager's; its web address."""
    web = f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_WITH_A_TEST_MODEL, web],
        cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            if "Local model answering at" in log.read_text() and httpx.get(f"http://{web}/", timeout=2).is_success:
                return process, web
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise AssertionError(f"serve did not come up:\n{log.read_text()}")


def model_pids(log: Path) -> list[int]:
    return [int(pid) for pid in re.findall(r"Embedded model started \(pid (\d+)\)", log.read_text())]


def running(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def listening(port: str) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=1):
            return True
    except OSError:
        return False


def gone(pid: int, port: str, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not running(pid) and not listening(port):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_stop_sent_to_serve_s_process_group_stops_its_model_and_starts_no_other(site, tmp_path, stop):
    """A service manager's SIGTERM, or Ctrl-C on `make run`, reaches the whole process group: the model is not
    killed under its supervisor (which restarted it during the shutdown, the new process left behind)."""
    log = tmp_path / "serve.log"
    process, _ = serve(site, log)
    (model,) = model_pids(log)
    os.killpg(process.pid, stop)
    process.wait(30)
    assert gone(model, site["CHAOSLM_LOCAL_MODEL_PORT"]), f"the model outlived serve:\n{log.read_text()}"
    text = log.read_text()
    assert "exited" not in text.split("Quit the server with CONTROL-C.", 1)[1]
    assert "Restarting the embedded model" not in text
    assert model_pids(log) == [model]


def test_a_serve_killed_outright_leaves_a_model_the_next_serve_stops_and_replaces_with_one_it_supervises(
    site, tmp_path
):
    port = site["CHAOSLM_LOCAL_MODEL_PORT"]
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first, _ = serve(site, first_log)
    (left,) = model_pids(first_log)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert running(left) and listening(port)  # nothing could stop it: its supervisor died with serve
    second, _ = serve(site, second_log)
    try:
        text = second_log.read_text()
        assert "Using the local model already running" not in text
        assert (
            f"Stopping the embedded model a ChaosLM that has ended left running (pid {left}); starting a new one."
            in text
        )
        (own,) = model_pids(second_log)
        assert own != left and not running(left) and running(own)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(30)
    assert gone(own, port), second_log.read_text()
