"""Log lines name what they are about: a debate's failure, logged deep in the engine, names the debate and its owner,
readable by default and one JSON object a line with CHAOSLM_LOG_FORMAT=json."""

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from debates.models import Debate
from debates.setup import SeatChoice, create_debate
from personas.models import import_personas
from tests.servers import ROOT, run_python

pytestmark = pytest.mark.django_db(transaction=True)
PERSONAS = Path(__file__).resolve().parents[2] / "personas" / "samples"


@pytest.fixture
def console():
    """What the `chaoslm` loggers' console handler (as the settings configure it) writes."""
    (handler,) = logging.getLogger("chaoslm").handlers
    written = io.StringIO()
    previous = handler.setStream(written)
    yield written
    handler.setStream(previous)


def failing_duel(llm_server, settings):
    llm_server.configure(rules=[{"match": "", "fault": "500"}])
    settings.CHAOSLM_LLM_MAX_RETRIES = 0
    files = ["ada-sterling.yaml", "marcus-vale.yaml"]
    personas = {p.name: p for p in import_personas([(f, (PERSONAS / f).read_text()) for f in files])}
    owner = get_user_model().objects.create_user("olive")
    seats = {"a": SeatChoice(personas["Ada Sterling"]), "b": SeatChoice(personas["Marcus Vale"])}
    return create_debate(
        format_name="duel", topic="Ban cars?", premise="Yes", seats=seats, options={"turns": 1}, owner=owner
    )


def test_a_debates_failure_names_the_debate_and_its_owner(console, llm_server, settings, run_to_rest):
    debate = failing_duel(llm_server, settings)
    assert run_to_rest(debate.pk).status == Debate.Status.ERROR
    lines = console.getvalue().splitlines()
    failed = [line for line in lines if line.startswith(f"debate {debate.pk} failed:")]
    assert len(failed) == 1, lines
    assert failed[0].endswith(f" [debate={debate.pk} owner=olive]")
    # Every line the run logged names it, the gateway's too.
    assert all(f"debate={debate.pk} owner=olive" in line for line in lines), lines


def test_json_lines_carry_the_same_fields():
    code = """
import django, logging, sys
django.setup()
from chaoslm.logging_context import bound
with bound(debate=12, owner="olive"):
    logging.getLogger("chaoslm.engine").error("debate %s failed: %s", 12, "boom")
logging.getLogger("chaoslm.engine").warning("no context here")
"""
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "CHAOSLM_LOG_FORMAT": "json"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    first, second = (json.loads(line) for line in result.stderr.splitlines())
    assert set(first) == {"time", "level", "logger", "message", "debate", "owner"}
    assert first["level"] == "ERROR" and first["logger"] == "chaoslm.engine"
    assert (first["message"], first["debate"], first["owner"]) == ("debate 12 failed: boom", "12", "olive")
    assert second["message"] == "no context here" and "debate" not in second


def test_the_default_is_readable_text():
    code = """
import django, logging
django.setup()
from chaoslm.logging_context import bound
with bound(room=7, owner="otto"):
    logging.getLogger("chaoslm.rooms").warning("room %s: an answer was dropped", 7)
"""
    result = run_python(code)
    assert result.stderr.strip() == "room 7: an answer was dropped [room=7 owner=otto]"
