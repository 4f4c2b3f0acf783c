"""How ChaosLM keeps the embedded model running: the supervisor `serve` uses, the CPU check, and what a
user reads while the model is restarting or down.

The supervised process here is a real OpenAI-compatible server on its own port (the test server, or a
stand-in that crashes on its first completion as llama.cpp did on AMX machines), so this runs in the
fast suite; tests/llm/test_local_model_serve.py kills the real SmolLM2 under a real `serve`.
"""

import asyncio
import os
import platform
import signal
import sys
import time

import pytest
from django.core.management import CommandError, call_command

from chaoslm.llm import Callbacks, ChatOptions, LLMUnavailable, Policy, chat, local_model
from chaoslm.llm.endpoints import default_endpoint
from tests.servers import free_port

CRASHES_ON_FIRST_COMPLETION = """
import http.server, json, os, signal, sys

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "smollm2-135m", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        os.kill(os.getpid(), signal.SIGSEGV)

http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.fixture
def supervised(local_port):
    started = []

    def supervise(**options):
        argv = [sys.executable, "-m", "chaoslm.llm.testserver", "--port", str(local_port)]
        supervisor = local_model.Supervisor(local_port, argv=argv, start_wait=30, **options)
        supervisor.start()
        started.append(supervisor)
        return supervisor

    yield supervise
    for supervisor in started:
        supervisor.stop()
        assert supervisor.process.poll() is not None, "stop() left the model running"
    assert not local_model.status_path(local_port).exists()


def ask(endpoint, callbacks=None):
    return asyncio.run(
        chat(
            endpoint,
            [{"role": "user", "content": "Name a colour."}],
            ChatOptions(max_tokens=20),
            policy=Policy.from_settings(),
            callbacks=callbacks or Callbacks(),
        )
    )


@pytest.mark.django_db
def test_a_killed_model_is_logged_restarted_and_the_home_page_says_so_until_it_answers(supervised, client, caplog):
    supervisor = supervised(backoff=1.0)
    first = supervisor.process.pid
    assert 'id="local-model-trouble"' not in client.get("/").content.decode()

    os.kill(first, signal.SIGKILL)

    def banner():
        page = client.get("/").content.decode()
        return page if "The embedded model is restarting" in page else None

    html = wait_for(banner, 5, "the banner")
    assert (
        '<p class="error-box" role="alert" id="local-model-trouble">The embedded model is restarting '
        "(killed by signal SIGKILL (9); restart 1 of 5). ChaosLM restarts it by itself; "
        "this takes a few seconds.</p>"
    ) in html

    wait_for(lambda: local_model.trouble() is None, 30, "the model to answer again")
    assert supervisor.process.pid != first and supervisor.process.poll() is None
    assert 'id="local-model-trouble"' not in client.get("/").content.decode()
    messages = [record.getMessage() for record in caplog.records if record.name == "chaoslm.local_model"]
    assert f"Embedded model (pid {first}) exited: killed by signal SIGKILL (9). Log: {local_model.log_path()}" in (
        messages
    )
    assert f"Local model answering again (pid {supervisor.process.pid}) at {local_model.base_url()}" in messages
    assert ask(default_endpoint()).text.strip()


@pytest.mark.django_db
def test_a_call_made_while_the_model_restarts_waits_for_it_and_then_completes(supervised):
    supervisor = supervised(backoff=1.5)
    os.kill(supervisor.process.pid, signal.SIGKILL)
    wait_for(lambda: local_model.trouble() is not None, 5, "the supervisor to notice")
    waits = []

    result = ask(default_endpoint(), Callbacks(on_wait=lambda seconds, reason: waits.append(reason)))

    assert result.text.strip()
    assert waits and set(waits) == {"the embedded model is restarting"}


@pytest.mark.django_db
def test_after_its_bounded_restarts_the_model_is_down_and_users_read_so_at_once(supervised, client, caplog):
    supervisor = supervised(backoff=0.1, max_restarts=1)
    first = supervisor.process.pid
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: supervisor.process.pid != first and local_model.trouble() is None, 20, "the restart")
    os.kill(supervisor.process.pid, signal.SIGKILL)
    trouble = wait_for(lambda: (t := local_model.trouble()) and not t.restarting and t, 10, "the model to be down")

    expected = (
        "The embedded model is down (it exited 2 times in a row; the last time: killed by signal SIGKILL (9)). "
        "Restart ChaosLM (make run), or set OPENAI_BASE_URL to use another endpoint. "
        f"Its log: {local_model.log_path()}."
    )
    assert trouble.message == expected
    assert expected in client.get("/").content.decode()
    started = time.monotonic()
    with pytest.raises(LLMUnavailable) as error:
        ask(default_endpoint())
    assert str(error.value) == expected
    assert time.monotonic() - started < 2, "a model known to be down is not retried"
    assert any("not restarting it again" in record.getMessage() for record in caplog.records)


def test_start_returns_only_after_a_real_completion_not_after_v1_models(local_port, tmp_path):
    script = tmp_path / "crashes.py"
    script.write_text(CRASHES_ON_FIRST_COMPLETION)

    with pytest.raises(local_model.LocalModelMissing) as error:
        local_model.start(local_port, wait=20, argv=[sys.executable, str(script), str(local_port)])

    assert str(error.value).startswith(
        "The local model server exited at start (killed by signal SIGSEGV (11): llama.cpp crashed "
        "(docs/operations.md: Embedded model build)).\n"
    )


def test_a_status_left_by_a_dead_serve_is_ignored(local_port):
    local_model.status_path().write_text('{"state": "down", "detail": "x", "supervisor": 999999999}')
    try:
        assert local_model.trouble() is None
    finally:
        local_model.status_path().unlink()


def test_the_exit_of_the_model_is_described_in_words():
    assert local_model.describe_exit(0) == "exit status 0"
    assert local_model.describe_exit(1) == "exit status 1"
    assert local_model.describe_exit(-9) == "killed by signal SIGKILL (9)"
    assert local_model.describe_exit(-4).startswith("killed by signal SIGILL (4): the CPU refused an instruction")


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the CPU baseline is an x86-64 one")
@pytest.mark.django_db  # serve asks the database first: a server whose database is down says so in one line
def test_serve_refuses_a_cpu_without_the_build_baseline_in_plain_words(local_port, tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    # A Sandy Bridge: AVX but no AVX2, FMA, F16C or BMI2.
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 popcnt avx aes\n")
    monkeypatch.setattr(local_model, "CPUINFO", cpuinfo)

    with pytest.raises(CommandError) as error:
        call_command("serve", f"127.0.0.1:{free_port()}")

    assert str(error.value).startswith(
        "This CPU lacks avx2, fma, f16c, bmi2, which the embedded model's llama.cpp build needs (it would crash "
        "with SIGILL)."
    )
    assert local_model.missing_cpu_features(cpuinfo.read_text().replace("avx aes", "avx avx2 fma f16c bmi2")) == []
