"""A fresh install's first estimate is this machine's: before any call is timed, the new-debate form turns its
calls into minutes at the embedded model's speed, measured by its supervisor when the model first answered (the
server's own timings, as llama.cpp reports them), not at a fixed guess that said "about 2 minutes" of a duel that
took 8. Run against the test server as the embedded model's server."""

from __future__ import annotations

import json
import os
import sys

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from chaoslm.llm import local_model, local_status
from chaoslm.llm.local_status import UP, Speed
from debates import estimates
from personas.models import import_personas
from tests.servers import free_port

pytestmark = pytest.mark.django_db(transaction=True)

# What SmolLM2 did on two busy cores (llama.cpp's timings of the speed probe): 67 tokens a second read, 24 written.
BUSY = {"prompt_per_second": 66.7, "predicted_per_second": 23.6}
FORM_LINE = '<p class="muted" id="estimate">14 calls, {} at the options shown.</p>'


@pytest.fixture
def owner(client):
    user = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(user)
    import_personas(
        [
            ("a.yaml", "name: Ann\nrole: debater\npersonality: Ann argues.\n"),
            ("b.yaml", "name: Ben\nrole: debater\npersonality: Ben argues.\n"),
            ("j.yaml", "name: Jo\nrole: judge\npersonality: Jo judges.\njudging_criteria: Logic.\n"),
        ]
    )
    return client


@pytest.fixture
def local_port(settings):
    """No endpoint configured: the embedded model serves, on a port of this test's own."""
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_MODEL_PORT = free_port()
    yield settings.CHAOSLM_LOCAL_MODEL_PORT
    local_model.status_path().unlink(missing_ok=True)
    local_model.log_path().unlink(missing_ok=True)


def test_the_speed_probe_reads_the_server_s_own_timings(llm_server):
    llm_server.configure(timings=BUSY)
    assert local_model.measure_speed(llm_server.url) == Speed(66.7, 23.6)
    (probe,) = llm_server.requests
    assert probe.body["max_tokens"] == local_model.SPEED_PROBE_TOKENS
    assert probe.last_user == local_model.SPEED_PROBE


def test_without_timings_the_probe_takes_the_whole_call_as_writing(llm_server):
    # Its tokens over the call's time: the prompt's reading counted as writing, so the estimate errs long.
    speed = local_model.measure_speed(llm_server.url)
    assert speed is not None and speed.prompt_per_second is None and speed.write_per_second > 0
    llm_server.configure(rules=[{"fault": "500"}])
    assert local_model.measure_speed(llm_server.url) is None


def test_the_first_estimate_is_at_the_speed_the_supervisor_measured_when_the_model_started(owner, local_port, tmp_path):
    config = tmp_path / "server.json"
    config.write_text(json.dumps({"timings": BUSY}))
    argv = [sys.executable, "-m", "chaoslm.llm.testserver", "--port", str(local_port), "--config", str(config)]
    supervisor = local_model.Supervisor(local_port, argv=argv, start_wait=30)
    supervisor.start()
    try:
        assert local_status.speed_at(local_model.base_url()) == Speed(66.7, 23.6)
        # A typical call: 500 tokens read at 66.7 a second and 120 written at 23.6, 12.6 s; 14 of them, 3 minutes.
        assert estimates.seconds_per_call() == pytest.approx(500 / 66.7 + 120 / 23.6)
        page = owner.get(reverse("debate_new")).content.decode()
        assert FORM_LINE.format("about 3 minutes") in page
    finally:
        supervisor.stop()
    # Its supervisor gone, its word goes with it: the guess again (8 s a call), until a call is timed.
    assert local_status.speed_at(local_model.base_url()) is None
    assert FORM_LINE.format("about 2 minutes") in owner.get(reverse("debate_new")).content.decode()


def test_a_slower_machine_says_longer_and_a_dead_supervisor_s_speed_is_not_read(owner, local_port, settings):
    def measured(speed: dict, supervisor: int = os.getpid()) -> None:
        local_status.write("127.0.0.1", local_port, UP, "pid 1", local_model.log_path(), speed=speed)
        record = json.loads(local_model.status_path().read_text())
        local_model.status_path().write_text(json.dumps({**record, "supervisor": supervisor}))

    # 6 tokens a second written, no timings to tell reading apart: 120 / 6 = 20 s a call, 14 calls 4.7 minutes.
    measured({"prompt_per_second": None, "write_per_second": 6.0})
    assert FORM_LINE.format("about 5 minutes") in owner.get(reverse("debate_new")).content.decode()
    # A format's page says its time at that speed too, and whence it comes.
    plan = owner.get(reverse("format_detail", args=["duel"])).content.decode()
    assert ": about 10 minutes at the embedded model&#x27;s speed measured on this machine (20.0 s a call" in plan
    # A cap below the typical reply sizes it: 60 tokens at 6 a second.
    settings.CHAOSLM_LOCAL_MAX_TOKENS = 60
    assert estimates.seconds_per_call() == pytest.approx(60 / 6.0)
    # A record a killed `serve` left (its pid past any this machine gives) says nothing of this machine now.
    measured({"prompt_per_second": None, "write_per_second": 6.0}, supervisor=2**22 + 1)
    assert estimates.seconds_per_call() == estimates.GUESS_EMBEDDED
