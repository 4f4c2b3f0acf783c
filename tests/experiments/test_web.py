"""The experiment pages: the new form (upload or the sample set), the report page, the share link, exports, access."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from batches.checks import Contestant
from experiments import broadcast, design, services, work
from experiments.models import Experiment
from experiments.questions import sample
from experiments.routing import websocket_urlpatterns
from tests.batches.helpers import debater, first_push, judge
from tests.experiments.test_runs import run_to_end


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form_data(**changes):
    ada, bob, judy = debater("Ada"), debater("Bob"), judge("Judy")
    return {
        "name": "My experiment",
        "protocols": ["evidence_debate", "blind"],
        "debaters": [ada.pk, bob.pk],
        "judges": [judy.pk],
        "rounds": 1,
        "word_limit": 80,
        "concurrency": 2,
        "visibility": "unlisted",
        **changes,
    }


@pytest.mark.django_db
def test_a_bad_file_is_refused_naming_file_and_line_and_the_form_keeps_what_was_typed(people, monkeypatch):
    monkeypatch.setattr(work.EXPERIMENT, "start", lambda experiment: None)
    bad = SimpleUploadedFile("mine.jsonl", b'{"passage": "p", "question": "q", "answers": ["a", "b"], "correct": 3}\n')
    response = client_for(people["owner"]).post("/experiments/new/", form_data(questions_file=bad))
    assert response.status_code == 200
    html = response.content.decode()
    assert "mine.jsonl line 1: correct must be 0, 1 or null, not 3" in html
    assert 'value="My experiment"' in html
    assert not Experiment.objects.exists()


@pytest.mark.django_db
def test_the_sample_set_makes_an_experiment_and_its_page_says_which_figures_it_lacks_and_why(people, monkeypatch):
    started = []
    monkeypatch.setattr(work.EXPERIMENT, "start", started.append)
    response = client_for(people["owner"]).post("/experiments/new/", form_data(use_sample="on"))
    experiment = Experiment.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/experiments/{experiment.pk}/"
    assert started == [experiment]
    assert experiment.questions.count() == 12 and experiment.runs.count() == 12 * (2 + 1) * 2
    page = client_for(people["owner"]).get(f"/experiments/{experiment.pk}/").content.decode()
    assert "Judge accuracy by protocol" in page
    assert "\u2014 (no run has been judged yet)" in page and "undefined" not in page
    assert "onsubmit" not in page and ' style="' not in page  # nothing the content security policy refuses


@pytest.mark.django_db(transaction=True)
def test_the_share_link_shows_the_report_logged_out_and_a_private_one_shows_nothing(llm_server):
    experiment = services.create_experiment(
        name="<b>Shared</b>",
        questions=sample()[:2],
        protocols=["evidence_debate", "blind"],
        debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
        judges=[Contestant.of(judge("Judy"))],
        options={"rounds": 1},
        visibility="unlisted",
    )
    run_to_end(experiment)
    stranger = Client()
    page = stranger.get(f"/xs/{experiment.share_token}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "&lt;b&gt;Shared&lt;/b&gt;" in html and "<b>Shared</b>" not in html
    assert 'class="chart accuracy-chart"' in html and 'class="chart reliability-chart"' in html
    assert "Accuracy, Debate \u2212 Blind" in html
    assert html.count("<td>neither (50\u201350)</td>") == 12  # the runs table: the test server's judge says 50-50
    assert stranger.get(f"/experiments/{experiment.pk}/").status_code == 404  # unlisted: only through its link
    assert "Pause" not in html
    report = json.loads(stranger.get(f"/xs/{experiment.share_token}/export/report.json").content)
    assert report["progress"]["done"] == 12
    csv_body = stranger.get(f"/xs/{experiment.share_token}/export/runs.csv").content.decode()
    assert csv_body.splitlines()[0].startswith("run,question,protocol,judge,order")
    assert len(csv_body.splitlines()) == 13
    assert stranger.get(f"/xs/{experiment.share_token}/export/other.txt").status_code == 404
    Experiment.objects.filter(pk=experiment.pk).update(visibility="private")
    assert stranger.get(f"/xs/{experiment.share_token}/").status_code == 404
    assert stranger.post(f"/experiments/{experiment.pk}/pause/").status_code == 302  # to log in


@pytest.mark.django_db(transaction=True)
def test_the_live_push_carries_the_report_as_it_stands(llm_server):
    experiment = services.create_experiment(
        name="Live",
        questions=sample()[:1],
        protocols=["blind"],
        debaters=[],
        judges=[Contestant.of(judge("Judy"))],
    )
    before = broadcast.live_html(experiment)
    assert '<div id="report-figures" class="report-figures" hx-swap-oob="outerHTML">' in before
    assert "\u2014 (no run has been judged yet)" in before and "undefined" not in before
    run_to_end(experiment)
    after = broadcast.live_html(Experiment.objects.get(pk=experiment.pk))
    figures = after.split('id="report-figures"', 1)[1]
    assert '<td class="name">Blind</td><td>2</td><td>0</td><td>50%</td>' in figures  # 2 runs judged, 50-50
    assert 'class="chart accuracy-chart"' in figures and "no run has been judged yet" not in figures


@pytest.mark.django_db
def test_a_running_experiments_report_is_pushed_at_most_every_two_seconds_and_always_once_settled():
    experiment = services.create_experiment(
        name="Watched", questions=sample()[:1], protocols=["blind"], debaters=[], judges=[Contestant.of(judge("Judy"))]
    )
    assert broadcast.live_html_of(experiment.pk) == ""  # nobody watches: nothing is drawn
    async_to_sync(get_channel_layer().group_add)(broadcast.group(experiment.pk), "a-page")
    first, second = broadcast.live_html_of(experiment.pk), broadcast.live_html_of(experiment.pk)
    assert 'id="progress"' in first and 'id="report-figures"' in first
    assert 'id="progress"' in second and 'id="report-figures"' not in second  # within the report throttle's two seconds
    Experiment.objects.filter(pk=experiment.pk).update(status="completed")
    assert 'id="report-figures"' in broadcast.live_html_of(experiment.pk)


@pytest.mark.django_db
def test_only_the_owner_pauses_and_others_cannot_see_a_private_experiment(people, monkeypatch):
    monkeypatch.setattr("batches.kinds.submit", lambda kind, batch_id: None)
    experiment = services.create_experiment(
        name="Mine",
        questions=sample()[:1],
        protocols=["blind"],
        debaters=[],
        judges=[Contestant.of(judge("Judy"))],
        owner=people["owner"],
    )
    assert client_for(people["other"]).get(f"/experiments/{experiment.pk}/").status_code == 404
    assert client_for(people["other"]).post(f"/experiments/{experiment.pk}/pause/").status_code == 404
    assert client_for(people["owner"]).post(f"/experiments/{experiment.pk}/pause/").status_code == 302
    experiment.refresh_from_db()
    assert experiment.status == "paused"


@pytest.mark.django_db(transaction=True)
def test_the_socket_refuses_whom_the_page_refuses_and_sends_the_progress(people, monkeypatch):
    monkeypatch.setattr("batches.kinds.submit", lambda kind, batch_id: None)

    def make(visibility):
        return services.create_experiment(
            name=visibility,
            questions=sample()[:1],
            protocols=["blind"],
            debaters=[],
            judges=[Contestant.of(judge("Judy"))],
            owner=people["owner"],
            visibility=visibility,
        )

    private, unlisted = make("private"), make("unlisted")

    assert first_push(websocket_urlpatterns, f"/ws/experiments/{private.pk}/")[0] is False
    assert first_push(websocket_urlpatterns, f"/ws/experiment-share/{private.share_token}/")[0] is False
    connected, first = first_push(websocket_urlpatterns, f"/ws/experiment-share/{unlisted.share_token}/")
    assert connected
    assert 'id="progress"' in first and 'hx-swap-oob="outerHTML"' in first
    assert 'of <span class="t-total">2</span> runs' in first


def public_experiment(owner):
    return services.create_experiment(
        name="Open",
        questions=sample()[:1],
        protocols=["blind"],
        debaters=[],
        judges=[Contestant.of(judge("Judy"))],
        owner=owner,
        visibility="public",
    )


@pytest.mark.django_db
def test_leaving_public_gives_an_experiment_a_new_share_link(people, monkeypatch):
    monkeypatch.setattr("batches.kinds.submit", lambda kind, batch_id: None)
    experiment = public_experiment(people["owner"])
    old = experiment.share_token
    response = client_for(people["owner"]).post(f"/experiments/{experiment.pk}/visibility/", {"visibility": "unlisted"})
    assert response.status_code == 302
    experiment.refresh_from_db()
    assert (experiment.visibility, experiment.share_token != old) == ("unlisted", True)
    assert Client().get(f"/xs/{old}/").status_code == 404
    assert Client().get(f"/xs/{experiment.share_token}/").status_code == 200
    assert client_for(people["other"]).post(f"/experiments/{experiment.pk}/visibility/").status_code == 404


@pytest.mark.django_db
def test_only_the_owner_is_shown_an_experiments_share_link(people, monkeypatch):
    monkeypatch.setattr("batches.kinds.submit", lambda kind, batch_id: None)
    experiment = public_experiment(people["owner"])
    for viewer in (Client(), client_for(people["other"])):
        page = viewer.get(f"/experiments/{experiment.pk}/")
        assert page.status_code == 200
        assert experiment.share_token not in page.content.decode()
    assert experiment.share_token in client_for(people["owner"]).get(f"/experiments/{experiment.pk}/").content.decode()


@pytest.mark.django_db
def test_a_new_experiment_is_private_unless_its_owner_says_otherwise(people):
    # Like every other kind of work: private is what the form offers first.
    html = client_for(people["owner"]).get("/experiments/new/").content.decode()
    assert '<option value="private" selected>' in html
    assert '<option value="unlisted" selected>' not in html


@pytest.mark.parametrize(
    "questions, protocols, debaters, judges, rounds",
    [
        (3, ["evidence_debate", "consultancy", "blind", "oracle"], 2, 1, 1),
        (2, ["evidence_debate", "consultancy"], 3, 2, 2),
        (4, ["evidence_debate", "blind"], 2, 3, 3),
        (1, ["blind"], 0, 2, 3),
        (2, ["evidence_debate"], 1, 1, 1),  # one debater: no debate can be held
    ],
)
def test_the_estimate_counts_what_the_plan_makes(questions, protocols, debaters, judges, rounds):
    plans = design.runs(questions, protocols, debaters, judges)
    options = {"rounds": rounds}
    estimate = design.estimate(questions, protocols, debaters, judges, options)
    assert estimate.runs == len(plans)
    assert estimate.replays == sum(plan.source is not None for plan in plans)
    assert estimate.calls == sum(design.planned_calls(p.protocol, options, p.source is not None) for p in plans)


@pytest.mark.django_db
def test_the_form_says_how_many_debates_and_calls_before_it_starts(people):
    client = client_for(people["owner"])
    assert (
        "to see how many debates and LLM calls the experiment will make"
        in client.get("/experiments/new/").content.decode()
    )
    # The sample set's 12 questions, each with 4 debate runs (2 pairs, both orders) of 2 notes + 2 speeches a round
    # + 1 answer calls, and 2 blind runs of 1 call: 48 x 5 + 24 = 264 with one round, 48 x 7 + 24 = 360 with two.
    html = client.post("/experiments/estimate/", form_data(use_sample="on")).content.decode()
    assert "This experiment will run <strong>72 debates: 264 LLM calls.</strong>" in html
    html = client.post("/experiments/estimate/", form_data(use_sample="on", rounds=2)).content.decode()
    assert "<strong>72 debates: 360 LLM calls.</strong>" in html
    bad = SimpleUploadedFile("mine.jsonl", b"[1]\n")
    html = client.post("/experiments/estimate/", form_data(questions_file=bad)).content.decode()
    assert "mine.jsonl line 1: expected a JSON object" in html
    assert client.get("/experiments/estimate/").status_code == 405


@pytest.mark.django_db
def test_the_page_says_who_argues_what_by_each_protocols_speakers(people):
    """The runs table, the consultant columns and the arena's opt-in follow what each protocol's format seats: two
    debaters on the two answers, one consultant on an assigned answer, or the judge alone."""

    def page(protocols):
        experiment = services.create_experiment(
            name="Seated",
            questions=sample()[:1],
            protocols=protocols,
            debaters=[Contestant.of(debater("Ada")), Contestant.of(debater("Bob"))],
            judges=[Contestant.of(judge("Judy"))],
            owner=people["owner"],
        )
        return client_for(people["owner"]).get(f"/experiments/{experiment.pk}/").content.decode()

    html = page(["evidence_debate", "consultancy", "blind"])
    assert html.count("<td>Ada (answer 1) vs Bob (answer 2)</td>") == 2  # both answer orders
    assert html.count("<td>Ada argues answer 1</td>") == 2 and html.count("<td>Bob argues answer 2</td>") == 2
    assert html.count('<td><span class="muted">none</span></td>') == 2  # blind: the judge alone
    assert "<th>As consultant, believed when correct</th>" in html and "Questions the consultant" in html
    assert 'id="arena-setting"' in html

    html = page(["blind"])
    assert "argues answer" not in html and "As consultant" not in html and 'id="arena-setting"' not in html
