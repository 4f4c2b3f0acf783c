"""Stopping a batch from its page, against the test server over HTTP on the inline runner: Pause and Cancel start
no model call after the click returns, the debates in flight stop at their next call boundary within seconds (each
call in flight lands whole, stored once), the page says they are stopping until they have, and Resume goes on
with what was paused."""

from __future__ import annotations

import re
import time

import pytest
from django.urls import reverse

from batches.checks import Contestant
from batches.progress import NOT_CALLS
from chaoslm.runner import inline
from debates.models import Debate, Event
from experiments import design, work
from experiments import services as experiment_services
from experiments.questions import sample
from tests.batches.helpers import debater, judge, questions
from tournaments import services
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)

# Each call takes this long: the clicks below land while every debate in flight is inside a call.
CALL_SECONDS = 3.0


@pytest.fixture(autouse=True)
def _slow_calls_answer(llm_server, settings):
    settings.CHAOSLM_LLM_TIMEOUT = 4 * CALL_SECONDS


def in_flight(server) -> int:
    return sum(1 for r in list(server.requests) if r.finished is None)


def wait_for(condition, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"timed out after {timeout}s: {what}"
        time.sleep(0.05)
    return time.monotonic() - started


def page_text(client, url: str) -> str:
    html = client.get(url).content.decode()
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def a_tournament(owner) -> Tournament:
    # Twelve duels, three at a time: nine are still to start when the owner clicks.
    return services.create_tournament(
        name="Stopped",
        debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob", "Carol")],
        judges=[Contestant.of(judge("Judge Una"))],
        questions=questions(2),
        options={"turns": 2},
        concurrency=3,
        owner=owner,
    )


def calls_stored(debates) -> int:
    return Event.objects.filter(debate__in=debates).exclude(kind__in=NOT_CALLS).count()


def stop_while_calls_are_in_flight(client, server, kind, batch, action: str) -> tuple[float, int]:
    """Start the batch, wait until each of its three debates is inside a call, click `action`; when the click
    returned, and how many calls had started by then."""
    kind.start(batch)
    running = Debate.objects.filter(status=Debate.Status.RUNNING)
    wait_for(lambda: running.count() == 3 and in_flight(server) >= 3, 30, "three debates in a call")
    time.sleep(0.3)  # each has sent its first calls by now, and is CALL_SECONDS from their replies
    response = client.post(reverse(f"{batch._meta.model_name}_{action}", args=[batch.pk]))
    assert response.status_code == 302
    returned = time.monotonic()
    return returned, sum(1 for r in list(server.requests) if r.started <= returned)


def test_cancel_starts_no_call_after_the_click_and_its_debates_stop_within_seconds_saying_so(
    llm_server, people, client
):
    llm_server.configure(latency=CALL_SECONDS)
    owner = people["owner"]
    client.force_login(owner)
    tournament = a_tournament(owner)
    page = reverse("tournament_detail", args=[tournament.pk])
    returned, started = stop_while_calls_are_in_flight(client, llm_server, services.TOURNAMENT, tournament, "cancel")
    # The calls in flight are still being written: the page says the debates are stopping, not running.
    text = page_text(client, page)
    assert "Cancelled · 0 done · 3 stopping · 0 failed · of 12 debates" in text
    assert "Nothing new starts: the 3 debates in flight stop once their model calls land." in text
    took = wait_for(lambda: services.TOURNAMENT.is_settled(tournament.pk), 10, "the cancelled tournament settles")
    assert took < CALL_SECONDS + 3
    inline.wait_idle(10)
    time.sleep(0.5)  # anything that would start after the stop has had its chance
    assert [r for r in llm_server.requests if r.started > returned] == []
    assert len(llm_server.requests) == started
    # Each call in flight landed whole, once: one event a call, no error, no debate left running.
    debates = services.TOURNAMENT.debates(tournament)
    assert all(r.outcome == "ok" for r in llm_server.requests)
    assert calls_stored(debates) == started
    assert not Event.objects.filter(debate__in=debates, kind=Event.Kind.ERROR).exists()
    assert sorted(debates.values_list("status", flat=True)) == [Debate.Status.INTERRUPTED] * 3
    assert Debate.objects.count() == 3  # the nine others never started
    text = page_text(client, page)
    assert "Cancelled · 0 done · 0 running · 0 failed · of 12 debates" in text
    assert "Nothing new starts" not in text


def test_pause_stops_the_debates_in_flight_at_their_call_boundary_and_resume_finishes_each_once(
    llm_server, people, client
):
    llm_server.configure(latency=CALL_SECONDS)
    owner = people["owner"]
    client.force_login(owner)
    tournament = a_tournament(owner)
    returned, started = stop_while_calls_are_in_flight(client, llm_server, services.TOURNAMENT, tournament, "pause")
    text = page_text(client, reverse("tournament_detail", args=[tournament.pk]))
    assert "Paused · 0 done · 3 stopping · 0 failed · of 12 debates" in text
    assert "the 3 debates in flight stop once their model calls land, and Resume goes on with them." in text
    wait_for(lambda: services.TOURNAMENT.is_settled(tournament.pk), 10, "the paused tournament settles")
    inline.wait_idle(10)
    time.sleep(0.5)
    assert [r for r in llm_server.requests if r.started > returned] == []
    debates = services.TOURNAMENT.debates(tournament)
    assert calls_stored(debates) == started == len(llm_server.requests)
    assert sorted(debates.values_list("status", flat=True)) == [Debate.Status.INTERRUPTED] * 3

    llm_server.configure(latency=0.0)
    assert client.post(reverse("tournament_resume", args=[tournament.pk])).status_code == 302
    wait_for(lambda: services.TOURNAMENT.is_settled(tournament.pk), 120, "the resumed tournament finishes")
    inline.wait_idle(30)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.COMPLETED
    debates = services.TOURNAMENT.debates(tournament)
    assert sorted(set(debates.values_list("status", flat=True))) == [Debate.Status.COMPLETED]
    # The interrupted debates went on where they stopped: every call made once, each stored once.
    assert calls_stored(debates) == len(llm_server.requests)


def test_a_cancelled_experiment_starts_no_call_after_the_click_and_its_runs_stop(llm_server, people, client):
    llm_server.configure(latency=CALL_SECONDS)
    owner = people["owner"]
    client.force_login(owner)
    experiment = experiment_services.create_experiment(
        name="Stopped",
        questions=sample()[:2],
        protocols=[design.DEBATE],
        debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
        judges=[Contestant.of(judge("Judy"))],
        options={"rounds": 1},
        concurrency=3,
        owner=owner,
    )
    returned, started = stop_while_calls_are_in_flight(client, llm_server, work.EXPERIMENT, experiment, "cancel")
    text = page_text(client, reverse("experiment_detail", args=[experiment.pk]))
    assert "Cancelled · 0 done · 3 stopping · 0 failed · of 8 runs" in text
    wait_for(lambda: work.EXPERIMENT.is_settled(experiment.pk), 10, "the cancelled experiment settles")
    inline.wait_idle(10)
    time.sleep(0.5)
    assert [r for r in llm_server.requests if r.started > returned] == []
    debates = work.EXPERIMENT.debates(experiment)
    assert calls_stored(debates) == started == len(llm_server.requests)
    assert sorted(debates.values_list("status", flat=True)) == [Debate.Status.INTERRUPTED] * 3
