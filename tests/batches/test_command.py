"""`manage.py <kind> run` gives every kind's batch an owner alike (batches/command.py): the one asked for or the
admin, and prints its page and, unless it is private, its share link."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError

from batches.models import BatchRecord
from chaoslm.runner import inline
from debates.models import Debate
from experiments.models import Experiment
from tests.experiments import test_command as experiments
from tests.llm.smollm2 import free_port
from tests.tournaments import test_command as tournaments
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)

SITE = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class Kind:
    run: Callable[..., tuple[str, str]]  # its command: (stdout, stderr)
    spec: Callable[..., Path]  # a small spec of it, at a visibility
    model: type[BatchRecord]
    pages: str  # where its pages are
    share: str  # where its share links are
    whole: str  # a column title its report must print whole


KINDS = [
    pytest.param(
        Kind(experiments.run, experiments.blind_spec, Experiment, "experiments", "xs", "Unparsed"),
        id="experiment",
    ),
    pytest.param(
        Kind(tournaments.run, tournaments.small_spec, Tournament, "tournaments", "ts", "Win rate AGAINST"),
        id="tournament",
    ),
]


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


@pytest.mark.parametrize("kind", KINDS)
def test_run_belongs_to_its_owner_and_prints_its_page_and_share_link(kind, tmp_path, llm_server, runner_idle):
    carol = get_user_model().objects.create_user("carol", password="pw-carol-123")
    out, _ = kind.run("run", str(kind.spec(tmp_path)), "--owner", "carol")
    batch = kind.model.objects.get()
    assert batch.owner == carol and "Owner: carol" in out
    assert f"Page: {SITE}/{kind.pages}/{batch.pk}/" in out
    assert f"Share link: {SITE}/{kind.share}/{batch.share_token}/" in out
    # The report's tables print whole off a terminal: no column cut ("Unpar…"), no title broken over two lines.
    assert kind.whole in out and "…" not in out


@pytest.mark.parametrize("kind", KINDS)
def test_run_defaults_to_the_admin_and_says_so(kind, tmp_path, llm_server, runner_idle):
    admin = get_user_model().objects.create_superuser("admin", password="pw-admin-123")
    out, _ = kind.run("run", str(kind.spec(tmp_path, "private")))
    batch = kind.model.objects.get()
    assert batch.owner == admin
    assert "Owner: admin (the default; --owner USERNAME gives it to another user)" in out
    assert f"Page: {SITE}/{kind.pages}/{batch.pk}/" in out and "Share link" not in out


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_owner_is_refused_and_nothing_is_made(kind, tmp_path):
    with pytest.raises(CommandError, match="there is no user 'nobody' to own it"):
        kind.run("run", str(kind.spec(tmp_path)), "--owner", "nobody")
    assert not kind.model.objects.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_an_embedded_model_that_cannot_start_stops_the_run_with_why_and_how_to_resume(kind, tmp_path, settings):
    """With no endpoint configured the command starts the embedded model itself (no `serve` needed); when that
    model cannot start, the batch is kept, unstarted, and the error says how to go on."""
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_MODEL = str(tmp_path / "missing.gguf")
    settings.CHAOSLM_LOCAL_MODEL_PORT = free_port()
    spec = kind.spec(tmp_path)
    with pytest.raises(CommandError) as refused:
        kind.run("run", str(spec))
    batch = kind.model.objects.get()
    noun = kind.model._meta.model_name
    message = str(refused.value)
    assert message.startswith(f"CHAOSLM_LOCAL_MODEL names {tmp_path / 'missing.gguf'}, which does not exist. ")
    assert message.endswith(
        f"\n{noun.capitalize()} {batch.pk} is saved: once a model answers, run it with "
        f"uv run python manage.py {noun} resume {batch.pk}"
    )
    assert not Debate.objects.exists()
