"""The rate limits are moving windows of 60 seconds, not clock minutes: a client that spends its limit just before
a minute's end and again just after is refused the second time. Every 429 carries a Retry-After that is when one
more call will pass. The API's calls a minute, the starts a minute and the votes a minute alike.

The clock is the test's: `limits`' in-memory storage and chaoslm/limits.py read time through it."""

from __future__ import annotations

import os
import types
import uuid

import limits.storage.memory
import pytest
from django.core.management import call_command
from django.test import Client

from api.tokens import create_token
from audience.models import PollVote
from chaoslm import limits as chaoslm_limits
from personas.models import Persona
from tests.audience.test_votes import poll_duel, share_urls, vote
from tests.conftest import require

pytestmark = pytest.mark.django_db

MINUTE_END = 1_800_000_000 - 0.5  # half a second before a clock minute ends (1_800_000_000 is a whole minute)


@pytest.fixture
def clock(monkeypatch):
    """The time as the rate limits read it; `clock.now` is set by the test."""
    fake = types.SimpleNamespace(now=MINUTE_END)
    reader = types.SimpleNamespace(time=lambda: fake.now)
    monkeypatch.setattr(limits.storage.memory, "time", reader)
    monkeypatch.setattr(chaoslm_limits, "time", reader)
    chaoslm_limits.reset()
    return fake


def test_twice_the_api_limit_across_a_minute_boundary_is_refused(client, people, settings, clock):
    settings.CHAOSLM_API_CALLS_PER_MINUTE = 3
    _, secret = create_token(people["owner"], "busy", read_only=True)

    def call():
        return client.get("/api/v1/personas", HTTP_AUTHORIZATION=f"Bearer {secret}")

    assert [call().status_code for _ in range(3)] == [200, 200, 200]  # at :59.5
    clock.now += 1  # :00.5 of the next clock minute: a fixed window would start counting again
    refused = call()
    assert refused.status_code == 429 and refused["Content-Type"] == "application/problem+json"
    assert refused["Retry-After"] == "59"  # the first call leaves the window 60 s after it was made
    assert "try again in 59 seconds" in refused.json()["detail"]
    clock.now += 58.9
    assert call().status_code == 429  # still within 60 s of the first
    clock.now += 0.2  # 60.1 s after the first three: they have left the window, and the refused ones never counted
    assert [call().status_code for _ in range(4)] == [200, 200, 200, 429]


def test_the_start_limit_is_a_moving_window_and_its_429_carries_retry_after(client, people, settings, clock):
    settings.CHAOSLM_STARTS_PER_MINUTE = 2
    settings.CHAOSLM_MAX_RUNNING_DEBATES = 100
    call_command("import_personas", "personas/samples/", verbosity=0)
    debaters = list(Persona.objects.filter(role="debater").values_list("pk", flat=True))[:2]
    _, secret = create_token(people["owner"], "starts", read_only=False)

    def start():
        body = {"topic": "Should cities ban cars?", "seats": {"a": debaters[0], "b": debaters[1]}}
        return client.post(
            "/api/v1/debates", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {secret}"
        )

    assert [start().status_code for _ in range(2)] == [201, 201]
    clock.now += 1
    refused = start()
    assert refused.status_code == 429 and refused["Content-Type"] == "application/problem+json"
    assert refused["Retry-After"] == "59"
    assert "in the last minute, the most allowed. Try again in 59 seconds." in refused.json()["detail"]


def test_a_cap_on_what_runs_at_once_is_a_429_with_retry_after(client, people, settings):
    settings.CHAOSLM_MAX_RUNNING_DEBATES = 0
    call_command("import_personas", "personas/samples/", verbosity=0)
    debaters = list(Persona.objects.filter(role="debater").values_list("pk", flat=True))[:2]
    _, secret = create_token(people["owner"], "caps", read_only=False)
    body = {"topic": "Capped?", "seats": {"a": debaters[0], "b": debaters[1]}}
    refused = client.post(
        "/api/v1/debates", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {secret}"
    )
    assert refused.status_code == 429
    assert refused["Retry-After"] == str(chaoslm_limits.CAP_RETRY_AFTER)


def test_twice_the_vote_limit_across_a_minute_boundary_is_refused(people, settings, clock):
    settings.CHAOSLM_POLL_VOTES_PER_MINUTE = 3
    debate = poll_duel(people["owner"])
    _, vote_url, _ = share_urls(debate)
    assert [vote(Client(), vote_url, "before", "a").status_code for _ in range(3)] == [302, 302, 302]
    clock.now += 1
    refused = vote(Client(), vote_url, "before", "a")
    assert refused.status_code == 429 and refused["Retry-After"] == "59"
    assert "try again in 59 seconds" in refused.content.decode()
    assert PollVote.objects.count() == 3
    clock.now += 59.1
    assert vote(Client(), vote_url, "before", "a").status_code == 302


def test_the_window_is_counted_in_redis_for_every_process(settings, monkeypatch):
    """With REDIS_URL, a new limiter (another web process's) sees the calls the first one counted."""
    url = os.environ.get("CHAOSLM_TEST_REDIS_URL", "")
    require(bool(url), "Redis (CHAOSLM_TEST_REDIS_URL)")
    settings.REDIS_URL = url.rsplit("/", 1)[0] + "/13"
    monkeypatch.setattr(chaoslm_limits, "_limiter", None)
    chaoslm_limits.reset()
    name = f"tests:{uuid.uuid4()}"
    assert [chaoslm_limits.rate(name, 2) for _ in range(2)] == [None, None]
    monkeypatch.setattr(chaoslm_limits, "_limiter", None)  # another process: its own limiter, the same Redis
    wait = chaoslm_limits.rate(name, 2)
    assert wait is not None and 59 <= wait <= 60
    chaoslm_limits.reset()
