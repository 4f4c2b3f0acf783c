"""Deleting an experiment, from its page or the admin, while it runs: its run stops first (no further call at the
model, no traceback in the log), and nothing of it is left, its runs' debates included. Only its owner (or
staff) may; a stranger gets what every other view gives them."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from batches.checks import Contestant
from chaoslm.runner import inline
from debates.models import Debate, Event
from experiments import design, services, work
from experiments.models import Experiment, Participant, Question, Run
from experiments.questions import sample
from tests.batches.helpers import debater, judge
from tests.core.test_delete_running import calls_stop, client_of, no_tracebacks, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def make(owner, *, visibility="private", questions=2, concurrency=2) -> Experiment:
    return services.create_experiment(
        name="Doomed",
        questions=sample()[:questions],
        protocols=[design.DEBATE, design.BLIND],
        debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
        judges=[Contestant.of(judge("Judy"))],
        options={"rounds": 3},
        concurrency=concurrency,
        owner=owner,
        visibility=visibility,
    )


def started_running(experiment: Experiment) -> list[int]:
    """Start it and wait until one of its debates is mid-speech; the ids of its debates made so far."""
    work.EXPERIMENT.start(experiment)
    wait_for(lambda: Event.objects.filter(debate__experiment_run__experiment=experiment, kind="TURN").exists())
    assert Experiment.objects.get(pk=experiment.pk).status == Experiment.Status.RUNNING
    debate_ids = list(Run.objects.filter(experiment=experiment).exclude(debate=None).values_list("debate", flat=True))
    assert debate_ids and Debate.objects.filter(pk__in=debate_ids, status=Debate.Status.RUNNING).exists()
    return debate_ids


def nothing_left(experiment_id: int, debate_ids: list[int]) -> None:
    assert not Experiment.objects.filter(pk=experiment_id).exists()
    for model in (Run, Participant, Question):
        assert not model.objects.filter(experiment_id=experiment_id).exists()
    assert not Debate.objects.filter(pk__in=debate_ids).exists()
    assert not Event.objects.filter(debate_id__in=debate_ids).exists()


def test_deleting_a_running_experiment_from_its_page_stops_it_and_its_debates_without_a_traceback(
    people, llm_server, caplog
):
    caplog.set_level(logging.INFO)
    llm_server.configure(latency=0.2, token_rate=50, reply_words=20)
    experiment = make(people["owner"])
    debate_ids = started_running(experiment)

    # The owner's page offers it behind a disclosure (the confirmation), as a POST form with its CSRF token.
    owner = client_of(people["owner"])
    page = owner.get(reverse("experiment_detail", args=[experiment.pk])).content.decode()
    form = page.split("<summary>Delete…</summary>", 1)[1].split("</form>", 1)[0]
    assert f'<form method="post" action="{reverse("experiment_delete", args=[experiment.pk])}">' in form
    assert 'name="csrfmiddlewaretoken"' in form and "Delete the experiment" in form

    response = owner.post(reverse("experiment_delete", args=[experiment.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("experiment_list")

    before, after = calls_stop(llm_server)
    assert after == before
    inline.wait_idle()
    nothing_left(experiment.pk, debate_ids)
    listing = owner.get(response["Location"]).content.decode()
    assert "Experiment deleted, with its runs&#x27; debates." in listing and "Doomed" not in listing
    no_tracebacks(caplog)


def test_deleting_a_running_experiment_in_the_admin_stops_it_too(llm_server, caplog):
    caplog.set_level(logging.INFO)
    llm_server.configure(latency=0.2, token_rate=50, reply_words=20)
    boss = get_user_model().objects.create_superuser("boss", password="pw-boss-123")
    experiment = make(None)
    debate_ids = started_running(experiment)

    admin = client_of(boss)
    url = reverse("admin:experiments_experiment_delete", args=[experiment.pk])
    confirm = admin.get(url)
    assert confirm.status_code == 200 and "Doomed" in confirm.content.decode()
    assert admin.post(url, {"post": "yes"}).status_code == 302

    before, after = calls_stop(llm_server)
    assert after == before
    inline.wait_idle()
    nothing_left(experiment.pk, debate_ids)
    no_tracebacks(caplog)


def test_only_the_owner_or_staff_delete_an_experiment(people, llm_server):
    private, public = make(people["owner"]), make(people["owner"], visibility="public")
    other = client_of(people["other"])
    # A stranger: the same 404 as for one that does not exist when they cannot see it, 403 when they can.
    assert other.post(reverse("experiment_delete", args=[private.pk])).status_code == 404
    assert other.post(reverse("experiment_delete", args=[public.pk])).status_code == 403
    assert other.post(reverse("experiment_delete", args=[public.pk + 1000])).status_code == 404
    assert (
        reverse("experiment_delete", args=[public.pk])
        not in other.get(reverse("experiment_detail", args=[public.pk])).content.decode()
    )
    # Logged out: sent to log in; a GET does nothing (405).
    anonymous = Client().post(reverse("experiment_delete", args=[public.pk]))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    assert client_of(people["owner"]).get(reverse("experiment_delete", args=[public.pk])).status_code == 405
    # Without the CSRF token, even the owner's POST is refused.
    csrf_checked = Client(enforce_csrf_checks=True)
    csrf_checked.force_login(people["owner"])
    assert csrf_checked.post(reverse("experiment_delete", args=[public.pk])).status_code == 403
    assert Experiment.objects.filter(pk__in=[private.pk, public.pk]).count() == 2

    assert client_of(people["staff"]).post(reverse("experiment_delete", args=[private.pk])).status_code == 302
    assert client_of(people["owner"]).post(reverse("experiment_delete", args=[public.pk])).status_code == 302
    assert not Experiment.objects.exists()


def test_experiments_in_the_admin_are_read_only_but_for_the_name(people):
    boss = client_of(get_user_model().objects.create_superuser("boss", password="pw-boss-123"))
    experiment = make(people["owner"], questions=1)
    index = boss.get(reverse("admin:index")).content.decode()
    assert reverse("admin:experiments_experiment_changelist") in index
    assert reverse("admin:experiments_run_changelist") in index
    assert "Doomed" in boss.get(reverse("admin:experiments_experiment_changelist")).content.decode()
    page = boss.get(reverse("admin:experiments_experiment_change", args=[experiment.pk])).content.decode()
    assert 'name="name"' in page and 'name="options"' not in page and 'name="concurrency"' not in page
    assert "Ada" in page and "Judy" in page and sample()[0].question in page
    assert boss.get(reverse("admin:experiments_experiment_add")).status_code == 403

    management = {
        f"{prefix}-{key}": value
        for prefix in ("participants", "questions")
        for key, value in (("TOTAL_FORMS", 0), ("INITIAL_FORMS", 0), ("MIN_NUM_FORMS", 0), ("MAX_NUM_FORMS", 1000))
    }
    url = reverse("admin:experiments_experiment_change", args=[experiment.pk])
    data = {"name": "Renamed", "visibility": experiment.visibility, "concurrency": 99, "options": '{"rounds": 9}'}
    response = boss.post(url, {**data, **management})
    assert response.status_code == 302, response.content.decode()[:2000]
    experiment.refresh_from_db()
    assert (experiment.name, experiment.concurrency, experiment.options) == ("Renamed", 2, {"rounds": 3})

    run = Run.objects.filter(experiment=experiment).first()
    assert boss.get(reverse("admin:experiments_run_change", args=[run.pk])).status_code == 200
    assert boss.post(reverse("admin:experiments_run_change", args=[run.pk]), {"order": 99}).status_code == 403
    assert boss.get(reverse("admin:experiments_run_delete", args=[run.pk])).status_code == 403
