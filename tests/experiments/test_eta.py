"""An experiment's ETA, at the pace of its model calls as a tournament's (batches.progress.eta_seconds, one function
for both): the calls each run plans (experiments.design.planned_calls) are the calls a finished run made at the
test server, and the ETA shows from the first calls, on the page too."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from batches import schedule
from batches.checks import Contestant
from batches.progress import NOT_CALLS
from debates.models import Debate, Event
from experiments import design, selectors, services, work
from experiments.models import Experiment, Run
from experiments.questions import sample
from tests.batches.helpers import debater, judge
from tests.experiments.test_runs import run_to_end


def test_the_calls_each_protocol_plans():
    for rounds, debate, consultancy in ((1, 5, 3), (2, 7, 5), (3, 9, 7), (10, 23, 21)):
        options = {"rounds": rounds, "word_limit": 80, "simultaneous": 1}
        assert design.planned_calls(design.DEBATE, options, replay=False) == debate
        assert design.planned_calls(design.CONSULTANCY, options, replay=False) == consultancy
        for protocol in (design.BLIND, design.ORACLE):
            assert design.planned_calls(protocol, options, replay=False) == 1
        # Another judge of a panel reading a finished debate: its answer alone.
        assert design.planned_calls(design.DEBATE, options, replay=True) == 1
    assert design.planned_calls(design.DEBATE, {}, replay=False) == 9  # three rounds unless told


@pytest.mark.django_db(transaction=True)
def test_the_planned_calls_are_the_calls_finished_runs_made_at_the_server(llm_server):
    experiment = services.create_experiment(
        name="Counted",
        questions=sample()[:1],
        protocols=list(design.PROTOCOLS),
        debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
        judges=[Contestant.of(judge("Judy")), Contestant.of(judge("Kim"))],
        options={"rounds": 2, "word_limit": 40},
        concurrency=4,
    )
    finished = run_to_end(experiment)
    assert finished.status == Experiment.Status.COMPLETED
    every_job = selectors.jobs(finished)
    assert every_job and all(job.status == schedule.COMPLETED for job in every_job)
    # Kim rereads each of Judy's four debates (a judge-only replay); the other runs are Kim's own.
    assert sum(job.kind == schedule.REPLAY for job in every_job) == 4
    planned = selectors.planned_calls(finished)
    # Every request the server got is a call some run planned, and none is missing.
    assert sum(planned(job) for job in every_job) == len(llm_server.requests)
    # Run by run: the calls its debate stored (what the ETA counts of a run in flight) are the planned ones.
    debates = dict(Run.objects.filter(experiment=finished).values_list("id", "debate_id"))
    protocols = dict(Run.objects.filter(experiment=finished).values_list("id", "protocol"))
    made = {
        job.id: Event.objects.filter(debate_id=debates[job.id]).exclude(kind__in=NOT_CALLS).count() for job in every_job
    }
    assert made == {job.id: planned(job) for job in every_job}
    by_protocol = {protocols[job.id]: planned(job) for job in every_job if job.kind != schedule.REPLAY}
    assert by_protocol == {design.DEBATE: 7, design.CONSULTANCY: 5, design.BLIND: 1, design.ORACLE: 1}


def _calls(debate: Debate, count: int, start: int = 1) -> None:
    Event.objects.bulk_create(
        [Event(debate=debate, ordinal=start + i, kind="PLAN" if i < 2 else "TURN", content="x") for i in range(count)]
        + ([Event(debate=debate, ordinal=0, kind="HEADER")] if start == 1 else [])
    )


@pytest.mark.django_db
def test_the_eta_shows_from_the_first_calls_at_their_pace_on_the_page_too(people):
    experiment = services.create_experiment(
        name="Paced",
        questions=sample()[:1],
        protocols=[design.DEBATE, design.BLIND],
        debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
        judges=[Contestant.of(judge("Judy"))],
        options={"rounds": 1},
        owner=people["owner"],
    )
    # Four debate runs of 5 calls, two blind runs of 1: 22 calls. Their debates made, none running yet.
    work.EXPERIMENT.advance(experiment.pk, start=lambda debate_id: None)
    assert selectors.progress(experiment).eta_seconds is None  # no call yet
    first = Run.objects.filter(experiment=experiment, protocol=design.DEBATE).order_by("order").first().debate

    # 100 seconds in, the first debate has made its 2 notes and nothing has finished: 0.02 calls a second, 20 left.
    Debate.objects.filter(pk=first.pk).update(status="running", started_at=timezone.now() - timedelta(seconds=100))
    _calls(first, 2)
    progress = selectors.progress(experiment)
    assert (progress.done, progress.running) == (0, 6)
    assert progress.eta_seconds == pytest.approx(1000, rel=0.01)
    client = Client()
    client.force_login(people["owner"])
    page = client.get(reverse("experiment_detail", args=[experiment.pk])).content.decode()
    eta = r'<span class="eta" data-eta-seconds="\d+" data-overdue="[^"]+">'
    assert re.search(r'of <span class="t-total">6</span> runs · ' + eta + r"about 16 min \d+ s left", page)

    # 200 seconds in, it finished (all 5 calls): 0.025 calls a second, 17 left.
    Debate.objects.filter(pk=first.pk).update(
        status="completed", started_at=timezone.now() - timedelta(seconds=200), finished_at=timezone.now()
    )
    _calls(first, 3, start=3)
    assert selectors.progress(experiment).eta_seconds == pytest.approx(680, rel=0.01)

    # Paused: no ETA.
    work.EXPERIMENT.pause(experiment)
    experiment.refresh_from_db()
    assert selectors.progress(experiment).eta_text == ""
