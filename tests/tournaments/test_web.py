"""Tournament pages, form, exports and socket: who gets what, what the page shows, what the form refuses."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from chaoslm.runner import inline
from tests.batches.helpers import always_for, debater, first_push, judge, provider_for, questions, run_to_end
from tournaments import services
from tournaments.models import Judgment, Question, Tournament
from tournaments.questions import QuestionSpec
from tournaments.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)

WHO = ["anonymous", "other", "owner", "staff"]
VISIBILITIES = ["private", "unlisted", "public"]
VIEW = {"anonymous": (404, 404, 200), "other": (404, 404, 200), "owner": (200, 200, 200), "staff": (200, 200, 200)}
SHARE = {who: (404, 200, 200) for who in WHO}
ACT = {"anonymous": (302, 302, 302), "other": (404, 404, 403), "owner": None, "staff": (403, 403, 403)}


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def client_for(who, people):
    client = Client()
    if who != "anonymous":
        client.force_login(people[who])
    return client


def make_tournament(owner, visibility="private", names=("Alice", "Bob"), topics=None, status=None):
    tournament = services.create_tournament(
        name="League",
        debaters=[services.Contestant.of(debater(n)) for n in names],
        judges=[services.Contestant.of(judge("Judge Una"))],
        questions=[QuestionSpec(t) for t in topics] if topics else questions(1),
        options={"turns": 2},
        owner=owner,
        visibility=visibility,
    )
    if status:
        Tournament.objects.filter(pk=tournament.pk).update(status=status)
        tournament.refresh_from_db()
    return tournament


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("visibility", VISIBILITIES)
def test_pages_share_links_and_exports(people, who, visibility):
    tournament = make_tournament(people["owner"], visibility, status=Tournament.Status.COMPLETED)
    client = client_for(who, people)
    index = VISIBILITIES.index(visibility)
    assert client.get(reverse("tournament_detail", args=[tournament.pk])).status_code == VIEW[who][index]
    for name in ("matches.csv", "ratings.csv", "report.json"):
        assert client.get(reverse("tournament_export", args=[tournament.pk, name])).status_code == VIEW[who][index]
        share_export = reverse("tournament_share_export", args=[tournament.share_token, name])
        assert client.get(share_export).status_code == SHARE[who][index]
    assert client.get(reverse("tournament_share", args=[tournament.share_token])).status_code == SHARE[who][index]
    assert client.get(reverse("tournament_share", args=["not-the-token"])).status_code == 404


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("visibility", VISIBILITIES)
@pytest.mark.parametrize("action", ["tournament_pause", "tournament_cancel", "tournament_visibility"])
def test_owner_only_actions(people, who, visibility, action):
    tournament = make_tournament(people["owner"], visibility)
    response = client_for(who, people).post(reverse(action, args=[tournament.pk]), {"visibility": "public"})
    tournament.refresh_from_db()
    # Staff manage any tournament's sharing (one made on the command line may have no owner who could).
    if who == "owner" or (who == "staff" and action == "tournament_visibility"):
        assert response.status_code == 302
        changed = {"tournament_pause": "paused", "tournament_cancel": "cancelled"}
        if action in changed:
            assert tournament.status == changed[action]
        else:
            assert tournament.visibility == "public"
    else:
        assert response.status_code == ACT[who][VISIBILITIES.index(visibility)]
        assert (tournament.status, tournament.visibility) == ("running", visibility)


def test_actions_refuse_get_and_need_the_csrf_token(people):
    tournament = make_tournament(people["owner"], "public")
    owner = client_for("owner", people)
    for action in ("tournament_pause", "tournament_resume", "tournament_cancel", "tournament_visibility"):
        assert owner.get(reverse(action, args=[tournament.pk])).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(people["owner"])
    assert strict.post(reverse("tournament_pause", args=[tournament.pk])).status_code == 403
    assert strict.post(reverse("tournament_new"), {"name": "x"}).status_code == 403
    tournament.refresh_from_db()
    assert tournament.status == "running"


def test_names_and_topics_are_escaped(people):
    tournament = make_tournament(
        people["owner"], "public", names=("<script>alert(1)</script>", "Bob"), topics=["<img src=x onerror=alert(2)>"]
    )
    page = client_for("anonymous", people).get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(2)&gt;" in page


def test_the_socket_refuses_whom_the_page_refuses_and_sends_the_live_parts(people):
    private = make_tournament(people["owner"], "private")
    unlisted = make_tournament(people["owner"], "unlisted", names=("Cleo", "Dan"))

    assert first_push(websocket_urlpatterns, f"/ws/tournaments/{private.pk}/")[0] is False
    assert first_push(websocket_urlpatterns, f"/ws/tournaments/{unlisted.pk}/")[0] is False
    assert first_push(websocket_urlpatterns, f"/ws/tournament-share/{private.share_token}/")[0] is False
    connected, first = first_push(websocket_urlpatterns, f"/ws/tournament-share/{unlisted.share_token}/")
    assert connected
    for element in ('id="progress"', 'id="leaderboard"', 'id="head-to-head"', 'id="judges"', 'id="batch-usage"'):
        assert element in first
    assert 'hx-swap-oob="outerHTML"' in first


def form_data(personas, **extra):
    data = {
        "name": "Upload league",
        "debaters": [p.pk for p in personas["debaters"]],
        "judges": [p.pk for p in personas["judges"]],
        "sides": "both",
        "repeats": 1,
        "concurrency": 4,
        "visibility": "unlisted",
        "option_turns": 2,
        "option_word_limit": 0,
    }
    data.update(extra)
    return data


@pytest.fixture
def personas(db):
    return {"debaters": [debater("Alice"), debater("Bob"), debater("Carol")], "judges": [judge("Judge Una")]}


def test_the_form_takes_questions_as_csv_and_says_what_it_will_run(people, personas, llm_server, runner_idle):
    client = client_for("owner", people)
    upload = SimpleUploadedFile("q.csv", b"topic,premise,correct\nTea?,Tea is best,for\nCars?,,\n", "text/csv")
    estimate = client.post(reverse("tournament_estimate"), form_data(personas, questions_file=upload))
    # 2 questions x 6 ordered pairs = 12 two-turn duels of 14 calls.
    assert "12 duels and 0 judge replays: 12 debates, 168 LLM calls." in estimate.content.decode()
    upload.seek(0)
    response = client.post(reverse("tournament_new"), form_data(personas, questions_file=upload))
    tournament = Tournament.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("tournament_detail", args=[tournament.pk])
    assert [(q.topic, q.premise, q.correct) for q in Question.objects.filter(tournament=tournament)] == [
        ("Tea?", "Tea is best", "for"),
        ("Cars?", "", ""),
    ]
    assert tournament.owner == people["owner"] and tournament.visibility == "unlisted"
    assert Judgment.objects.filter(match__tournament=tournament).count() == 12


def test_the_form_names_bad_rows_and_imports_nothing(people, personas):
    client = client_for("owner", people)
    upload = SimpleUploadedFile("q.csv", b"topic,correct\nTea?,for\n,against\nCars?,sometimes\n", "text/csv")
    page = client.post(reverse("tournament_new"), form_data(personas, questions_file=upload)).content.decode()
    assert "q.csv: line 3: the topic is empty" in page
    assert (
        "q.csv: line 4: correct must be &#x27;for&#x27;, &#x27;against&#x27; or empty, not &#x27;sometimes&#x27;"
        in page
    )
    assert not Tournament.objects.exists() and not Question.objects.exists()
    one = form_data(personas, questions="Tea?", debaters=[personas["debaters"][0].pk])
    assert "Choose at least two debaters." in client.post(reverse("tournament_new"), one).content.decode()
    assert not Tournament.objects.exists()


@pytest.mark.parametrize(
    ("turns", "message"),
    [(99, "Ensure this value is less than or equal to 40."), (0, "Ensure this value is greater than or equal to 1.")],
)
def test_the_duel_options_have_the_duels_limits(people, personas, turns, message):
    """The same fields as a new duel's (debates.forms.option_field): the same limits, the same messages."""
    data = form_data(personas, questions="Tea?", option_turns=turns)
    page = client_for("owner", people).post(reverse("tournament_new"), data).content.decode()
    assert message in page and 'name="option_word_limit"' in page
    assert not Tournament.objects.exists()


def test_starting_a_tournament_needs_a_login(personas):
    response = Client().post(reverse("tournament_new"), form_data(personas, questions="Tea?"))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not Tournament.objects.exists()


def test_a_finished_tournament_shows_its_report_and_exports_every_verdict(people, llm_server, runner_idle):
    llm_server.configure(rules=always_for(["Alice", "Bob", "Carol"]))
    tournament = services.create_tournament(
        name="Report",
        debaters=[services.Contestant.of(debater(n)) for n in ("Alice", "Bob", "Carol")],
        judges=[services.Contestant.of(judge("Judge Una", provider_for(llm_server, "bench")))],
        questions=questions(1),
        options={"turns": 2},
        repeats=2,
        owner=people["owner"],
        visibility="public",
    )
    run_to_end(tournament)
    client = client_for("anonymous", people)
    page = client.get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert "Completed" in page and '<span class="t-done">12</span>' in page
    assert page.count('<td class="name">') >= 3 + 1 + 3  # ratings, judges, usage rows
    assert '<svg class="forest"' in page and '<svg class="matrix"' in page
    # One judge: no panel agreement, and the page says why instead of a number.
    assert "Panel agreement on winners: <strong>— (one judge: panel figures compare two or more)</strong>" in page
    rows = list(
        csv.reader(
            io.StringIO(client.get(reverse("tournament_export", args=[tournament.pk, "matches.csv"])).content.decode())
        )
    )
    assert rows[0][:3] == ["match", "question", "topic"] and len(rows) == 1 + 6 * 2
    assert {row[11] for row in rows[1:]} == {"for"}
    ratings = list(
        csv.reader(
            io.StringIO(client.get(reverse("tournament_export", args=[tournament.pk, "ratings.csv"])).content.decode())
        )
    )
    assert [r[1] for r in ratings[1:]] and len(ratings) == 4
    report = json.loads(client.get(reverse("tournament_export", args=[tournament.pk, "report.json"])).content)
    assert {"rating", "ci_low", "ci_high"} <= set(report["ratings"][0])
    assert report["judges"][0]["for_win_rate"] == {"value": 1.0, "why": ""}
    assert report["panel"]["agreement"]["value"] is None and report["panel"]["agreement"]["why"]
    assert len(report["matches"]) == 6 and len(report["matches"][0]["judgments"]) == 2


FIRST_REQUEST = """
import sys, threading, django
django.setup()
from django.test import Client
assert "statsmodels" not in sys.modules
Client().get("/accounts/login/")
for thread in threading.enumerate():
    if thread.name == "load-report-libraries":
        thread.join(60)
print("statsmodels.stats.inter_rater" in sys.modules, "scipy.stats" in sys.modules)
if "scipy.stats" in sys.modules:
    import gc
    # Frozen once loaded: the collector's full passes (each a pause of the event loop) do not rescan them.
    assert not any(o is sys.modules["scipy.stats"].__dict__ for o in gc.get_objects()), "scipy.stats not frozen"
"""


@pytest.mark.parametrize("preload, loaded", [("true", "True True"), ("false", "False False")])
def test_a_serving_process_loads_the_report_libraries_after_its_first_request(preload, loaded, tmp_path):
    """So that the first tournament page a process shows does not wait seconds for scipy and statsmodels."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        "CHAOSLM_PRELOAD_REPORT_LIBRARIES": preload,
    }
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", FIRST_REQUEST], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == loaded


def test_a_refused_form_sums_up_every_problem_linked_to_its_field_and_checkboxes_have_no_colon(people, personas):
    client = client_for("owner", people)
    page = client.get(reverse("tournament_new")).content.decode()
    assert '<label for="id_arena">Put its finished matches in the arena</label>' in page
    assert "error-summary" not in page
    one = form_data(personas, name="Kept name", debaters=[personas["debaters"][0].pk], concurrency=0)
    page = client.post(reverse("tournament_new"), one).content.decode()
    summary = page.split('<div class="error-summary"')[1].split("</div>")[0]
    assert 'role="alert" tabindex="-1" autofocus' in summary
    for link in (
        '<a href="#id_debaters_0">Debaters: Choose at least two debaters.</a>',
        '<a href="#id_questions">Questions: Type at least one question or upload a file.</a>',
        '<a href="#id_concurrency">Concurrency: Ensure this value is greater than or equal to 1.</a>',
    ):
        assert link in summary
    assert 'value="Kept name"' in page
    assert not Tournament.objects.exists()
