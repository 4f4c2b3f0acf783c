"""`make run` as a user runs it, on the real embedded SmolLM2: a real `serve`, its model killed with SIGKILL.

In a file of its own, apart from tests/llm/test_local_model.py, so that `make test`'s xdist processes can run
it beside that module's tests (which share one model server) rather than after them.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from tests.llm.smollm2 import SHORT, free_port, require_smollm2

pytestmark = pytest.mark.slow


def test_serve_restarts_a_killed_model_says_so_meanwhile_and_a_debate_then_completes(tmp_path):
    """`make run` as a user runs it: a real `serve`, the real SmolLM2 under it, killed with SIGKILL."""
    require_smollm2()
    root = Path(__file__).resolve().parents[2]
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "DJANGO_"))}
    env |= {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CHAOSLM_LOCAL_MODEL_PORT": str(free_port()),
        "CHAOSLM_LLM_TIMEOUT": "120",
        "CHAOSLM_TRANSCRIPTS_DIR": str(tmp_path / "transcripts"),
    }

    def manage(*args, timeout=120):
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    manage("migrate", "--noinput")
    # Short-spoken personas: the duel is here to prove the model is back, not to take twenty minutes.
    personas = tmp_path / "personas"
    personas.mkdir()
    for name, role, tokens in [("Pat", "debater", 48), ("Cy", "debater", 48), ("Jo", "judge", 160)]:
        (personas / f"{name}.yaml").write_text(SHORT.format(name=name, role=role).replace("48", str(tokens)))
    manage("import_personas", str(personas))
    web = f"127.0.0.1:{free_port()}"
    log_file = tmp_path / "serve.log"
    with log_file.open("w") as log:
        serve = subprocess.Popen(
            [sys.executable, "manage.py", "serve", web], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    model_pids = set()
    debate = None

    def log_has(text):
        return text in log_file.read_text()

    def wait_for(condition, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            assert serve.poll() is None, f"serve exited while waiting for {what}:\n{log_file.read_text()}"
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}:\n{log_file.read_text()}")

    def home():
        try:
            return httpx.get(f"http://{web}/", timeout=5).text
        except httpx.HTTPError:
            return ""

    try:
        wait_for(lambda: log_has("Local model answering at") and "persona" in home(), 240, "serve to be up")
        first = int(re.search(r"Embedded model started \(pid (\d+)\)", log_file.read_text()).group(1))
        model_pids.add(first)
        assert 'id="local-model-trouble"' not in home()

        os.kill(first, signal.SIGKILL)
        # The duel starts at once: its first calls find the model down and wait for it.
        debate = subprocess.Popen(
            [sys.executable, "manage.py", "debate", "duel", "--topic", "Should homework be banned?",
             "--premise", "Homework should be banned", "--turns", "2", "--word-limit", "40",
             "--a", "Pat", "--b", "Cy", "--judge", "Jo", "--visibility", "public"],
            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        banners = []
        wait_for(lambda: banners.append(home()) or "The embedded model is restarting" in banners[-1], 30, "the banner")
        assert "killed by signal SIGKILL (9); restart 1 of 5" in banners[-1]
        wait_for(lambda: log_has("Local model answering again"), 180, "the restart")
        text = log_file.read_text()
        assert f"Embedded model (pid {first}) exited: killed by signal SIGKILL (9)." in text
        model_pids.add(int(re.search(r"Local model answering again \(pid (\d+)\)", text).group(1)))
        wait_for(lambda: 'id="local-model-trouble"' not in home(), 10, "the banner to go")

        # No deadline of ours: on a busy two-core machine a duel on SmolLM2 takes many minutes.
        output, _ = debate.communicate()
        assert debate.returncode == 0, output
        assert "Winner: " in output and "14 LLM calls" in output
        assert "Should homework be banned?" in home()
    finally:
        if debate is not None and debate.poll() is None:
            debate.kill()
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(30)
        except subprocess.TimeoutExpired:
            serve.kill()
        for pid in model_pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


USER_OF_THE_MODEL = """
import sys, time, pathlib, django
django.setup()
from chaoslm.llm import local_model
with local_model.running(lambda line: print(line, flush=True)):
    print("in", flush=True)
    while not pathlib.Path(sys.argv[1]).exists():
        time.sleep(0.1)
"""


def test_the_last_process_using_the_model_stops_it_not_the_one_that_started_it(tmp_path):
    """Two commands at once with no `serve` (`manage.py debate` in one terminal, `tournament run` in another):
    the first started the model and ends first; the second goes on using it and stops it when it ends."""
    require_smollm2()
    root = Path(__file__).resolve().parents[2]
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "DJANGO_"))}
    # One slot: the long prompt below takes the model whole, as a busy model of two slots would be taken by two.
    env |= {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "CHAOSLM_LOCAL_MODEL_PORT": str(port),
        "CHAOSLM_LOCAL_SLOTS": "1",
    }
    url = f"http://127.0.0.1:{port}/v1"

    def user(name):
        process = subprocess.Popen(
            [sys.executable, "-c", USER_OF_THE_MODEL, str(tmp_path / name)],
            cwd=root, env=env, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        lines = []
        while (line := process.stdout.readline().strip()) != "in":
            assert line, f"{name} ended before its block: {lines}"
            lines.append(line)
        return process, lines

    users = []
    try:
        first, said = user("first")
        users.append(first)
        assert said[0].startswith("No OPENAI_BASE_URL set: starting the embedded SmolLM2-135M model")
        # The second arrives while the model reads a long prompt for the first, with no slot free for another call.
        content = "Summarise: " + "news " * 2500  # seconds of reading, whatever the reply's length
        busy = {"model": "smollm2-135m", "messages": [{"role": "user", "content": content}], "max_tokens": 40}
        writing = threading.Thread(
            target=httpx.post, args=(f"{url}/chat/completions",), kwargs={"json": busy, "timeout": 300}
        )
        writing.start()
        time.sleep(0.5)
        second, said = user("second")
        users.append(second)
        assert said == []  # it found the model there, busy, and started none
        writing.join()
        (tmp_path / "first").touch()
        assert first.wait(30) == 0
        body = {"model": "smollm2-135m", "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 2}
        assert httpx.post(f"{url}/chat/completions", json=body, timeout=60).status_code == 200
        (tmp_path / "second").touch()
        assert second.wait(30) == 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and local_model_answers(url):
            time.sleep(0.2)
        assert not local_model_answers(url)
    finally:
        # Interrupted, not killed, where a check failed: a user's block then stops the model it started.
        for process in users:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
        Path(f"/tmp/chaoslm-local-model-{port}.log").unlink(missing_ok=True)


def local_model_answers(url):
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{url}/models", timeout=1).status_code == 200
    return False
