"""`serve` serves pages while the embedded model starts: the home page says how far along the start is (and how long
the last one took), asks again until the model answers, then says it is ready; a call made meanwhile waits for the
model rather than failing; a start that fails is said on the page and in the terminal.

The model is a stand-in that takes a few seconds before it listens (the OpenAI-compatible test server, started
late), under the real supervisor, so this runs in the fast suite."""

import asyncio
import re
import sys
import threading

import pytest

from chaoslm.llm import Callbacks, ChatOptions, Policy, chat, local_model
from chaoslm.llm.endpoints import default_endpoint

# The test server, listening only after a pause: as a model loading its weights, which answers nothing meanwhile.
SLOW_TO_START = (
    "import runpy, sys, time; time.sleep(float(sys.argv[2])); "
    "sys.argv = ['testserver', '--port', sys.argv[1]]; runpy.run_module('chaoslm.llm.testserver', run_name='__main__')"
)


@pytest.fixture
def supervise(local_port):
    started = []

    def start(argv: list[str]) -> tuple[local_model.Supervisor, list[str], threading.Event]:
        said: list[str] = []
        done = threading.Event()

        def say(line: str) -> None:
            said.append(line)
            done.set()

        supervisor = local_model.Supervisor(local_port, argv=argv, start_wait=30)
        supervisor.start_in_background(say)
        started.append(supervisor)
        return supervisor, said, done

    yield start
    for supervisor in started:
        supervisor.stop()
    assert not local_model.status_path(local_port).exists()


def slow_model(port: int, delay: float) -> list[str]:
    return [sys.executable, "-c", SLOW_TO_START, str(port), str(delay)]


def ask() -> str:
    options = ChatOptions(max_tokens=20)
    messages = [{"role": "user", "content": "Name a colour."}]
    reply = asyncio.run(
        chat(default_endpoint(), messages, options, policy=Policy.from_settings(), callbacks=Callbacks())
    )
    return reply.text


@pytest.mark.django_db
def test_the_home_page_says_the_model_is_starting_a_call_waits_for_it_and_the_page_then_says_it_is_ready(
    supervise, local_port, client
):
    supervisor, said, answered = supervise(slow_model(local_port, 3))

    # At once, before the model listens: the page is served, and says where the model is.
    home = client.get("/").content.decode()
    assert (
        '<div class="notice" id="local-model-status" hx-get="/local-model/status/" hx-trigger="every 2s" '
        'hx-swap="outerHTML">'
    ) in home
    so_far = re.search(
        r"The embedded model is starting \(loading SmolLM2-135M, (\d+) s so far\)\. Everything else works "
        r"meanwhile; a debate started now waits for it\.",
        home,
    )
    assert so_far and int(so_far[1]) < 3  # before the model is up
    assert "<progress" not in home  # no start on record to measure this one against
    assert "persona" in home and 'id="local-model-trouble"' not in home

    # A call made now waits for the model and gets its reply.
    assert ask().strip()
    assert answered.wait(10)
    (line,) = said
    took = round(local_model.last_start())
    assert took >= 3
    assert line == f"Local model answering at http://127.0.0.1:{local_port}/v1 (it took {took} s to start)."

    # The page's next poll: ready, and no more polling.
    status = client.get("/local-model/status/").content.decode()
    assert status.strip() == (
        f'<p class="notice" role="status" id="local-model-status">The embedded model is ready: it started in {took} s.'
        " Debates started meanwhile go on by themselves.</p>"
    )
    assert "local-model-status" not in client.get("/").content.decode()  # a page loaded once it is up: nothing
    supervisor.stop()

    # The next start is measured against this one: a bar, and the last start's time in words.
    supervise(slow_model(local_port, 3))
    home = client.get("/").content.decode()
    bar = re.search(
        rf'<progress max="{took}" value="(\d+)" aria-label="The embedded model\'s start, against its last one">', home
    )
    assert bar and int(bar[1]) < 3
    assert re.search(rf"\(loading SmolLM2-135M, {bar[1]} s so far; it took {took} s last time\)", home)


@pytest.mark.django_db
def test_a_model_that_cannot_start_is_said_on_the_page_and_in_the_terminal(supervise, local_port, client):
    _, said, told = supervise([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert told.wait(20)
    (line,) = said
    assert line.startswith("The embedded model could not start: The local model server exited at start (exit")
    for page in ("/", "/local-model/status/"):
        html = client.get(page).content.decode()
        assert '<p class="error-box" role="alert" id="local-model-trouble">The embedded model is down (The local ' in (
            html
        )
        assert "hx-get" not in html.split('id="local-model-trouble"')[1].split("</p>")[0]


def test_the_status_poll_is_not_there_when_no_embedded_model_is_in_use(client, settings, db):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    assert client.get("/local-model/status/").status_code == 404
