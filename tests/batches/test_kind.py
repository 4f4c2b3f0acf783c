"""A new kind of batch is a short list of files (docs/adding-a-batch-kind.md): here, a "series" of duels on one topic
between the same two personas, made of the two files that run it (its models, its `BatchKind`) and one line
registering it. Everything else (one pass at a time under the owner's cap, the inline loop, the wake of a finished
debate, pausing, the progress and its ETA, visibility, deleting) is batches/kinds.py's, unchanged.

Its faces, each from one more file of its own and no file of the product changed: its command (a `BatchCommand`),
its pages (`batches.views.urlpatterns` in its urls.py, which the root URLconf includes: here this module is the
root URLconf), with them its place in the navigation and its live page (batches/consumers.py serves its socket),
and the API's /batches/{kind}/... (status, the owner's actions, delete, events), which read the registry."""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from io import StringIO
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import yaml
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, models
from django.db.models import F
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.template.loader import render_to_string
from django.test.utils import isolate_apps
from rich.console import Console

from api.tokens import create_token
from batches import kinds, schedule
from batches import views as batch_views
from batches.command import BatchCommand
from batches.forms import BatchForm
from batches.kinds import BatchKind
from batches.models import BatchRecord
from batches.progress import ProgressView, jobs_from_rows, progress_view, settings_of
from chaoslm import runner, sharing
from chaoslm.runner import inline
from config import urls as root_urls
from config.routing import websocket_urlpatterns
from debates.models import Debate
from debates.setup import SeatChoice, create_debate
from tests.api.receiver import Receiver
from tests.batches.helpers import debater, judge

pytestmark = pytest.mark.django_db(transaction=True)


# -- file 1: its models (a batch, and one row per debate it needs) -------------------------------------------------
# (In a model registry of its own here, which knows the users too, so the rest of the suite never sees its tables.)
with isolate_apps("batches") as registry:
    registry.register_model("auth", get_user_model())

    class Series(BatchRecord):
        topic = models.CharField(max_length=200)

        class Meta(BatchRecord.Meta):
            app_label = "batches"
            verbose_name_plural = "series"

    class Bout(models.Model):  # noqa: DJ008 (a test's table)
        series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="bouts")
        order = models.PositiveIntegerField()
        debate = models.OneToOneField(Debate, null=True, on_delete=models.SET_NULL, related_name="+")
        attempts = models.PositiveSmallIntegerField(default=0)

        class Meta:
            app_label = "batches"


# -- file 2: its kind ----------------------------------------------------------------------------------------------
class SeriesKind(BatchKind):
    kind = "series"
    model = Series
    rows = Bout
    batch_link = "series"

    def jobs(self, batch: Series, stalled_after: float | None = None, *, open_only: bool = False) -> list:
        fields = ("id", "attempts", "debate_id", "debate__status", "debate__created_at", "debate__started_at")
        rows = Bout.objects.filter(series=batch).values(*fields, job_match=F("id"), job_order=F("order"))
        return jobs_from_rows([(schedule.MATCH, row) for row in rows], stalled_after)

    def create(self, batch: Series, job: schedule.Job, memo: dict[str, Any]) -> int | None:
        if "seats" not in memo:  # read once a pass
            people = {"a": debater("Alice"), "b": debater("Bob"), "judge": judge("Judge Una")}
            memo["seats"] = {key: SeatChoice(spec=persona.spec()) for key, persona in people.items()}
        debate = create_debate(
            format_name="duel",
            topic=batch.topic,
            seats=memo["seats"],
            options={"turns": 2},
            owner=batch.owner,
            visibility=batch.visibility,
            in_batch=True,
        )
        return self.link(job, debate)

    def progress(self, batch: Series) -> ProgressView:
        return progress_view(self.jobs(batch), settings_of(batch), self.debates(batch), _duel_calls)

    def group(self, batch_id: int) -> str:
        return f"series-{batch_id}"

    def live_html(self, batch_id: int) -> str:
        """Its page's live part: the progress line every kind's page has."""
        series = Series.objects.get(pk=batch_id)
        context = {"batch": series, "progress": self.progress(series), "unit": "duels"}
        return f'<div id="progress" hx-swap-oob="true">{render_to_string("batches/progress_line.html", context)}</div>'


def _duel_calls(job: schedule.Job) -> int:
    return 4 * 2 + 6  # a judged duel of 2 turns


SERIES = SeriesKind()


# -- its command: <app>/management/commands/series.py ---------------------------------------------------------------
@dataclass
class SeriesSpec:
    """A series's spec file: its fields are `create_series`'s arguments."""

    name: str
    topic: str
    bouts: int


def read_spec(path: Path) -> SeriesSpec:
    return SeriesSpec(**yaml.safe_load(path.read_text()))


def create_series(name: str, topic: str, bouts: int, owner: Any = None) -> Series:
    series = Series.objects.create(name=name, topic=topic, concurrency=1, owner=owner)
    Bout.objects.bulk_create([Bout(series=series, order=i) for i in range(bouts)])
    return series


class SeriesCommand(BatchCommand):
    kind = SERIES
    report_help = "print a series's progress"
    read_spec = staticmethod(read_spec)
    create_batch = staticmethod(create_series)
    as_json = staticmethod(lambda series: {"name": series.name, "duels": series.bouts.count()})

    def size(self, spec: SeriesSpec, checked: None) -> str:
        return f"{spec.bouts} duels on {spec.topic!r}"

    def print_report(self, series: Series, console: Console) -> None:
        self.print_heading(series, console, "duels")


# -- its pages: <app>/views.py and <app>/urls.py, which the root URLconf includes ------------------------------------
PAGE = engines["django"].from_string(
    '{% extends "base.html" %}{% block content %}<h1>{{ batch.name }}</h1>'
    '<div hx-ext="ws" ws-connect="{{ ws_url }}"><div id="progress"></div></div>{% endblock %}'
)


def page(request: HttpRequest, series: Series, common: dict[str, Any]) -> HttpResponse:
    return HttpResponse(PAGE.render({"batch": series, **common}, request))


EXPORTS = {"report.json": lambda series: json.dumps(SeriesCommand.as_json(series))}
# This module stands for the root URLconf (config/urls.py) with the kind's urls.py included in it.
urlpatterns = [
    *batch_views.urlpatterns(
        SERIES, share="sr", form=BatchForm, page=page, exports=EXPORTS, deleted="The series is deleted."
    ),
    *root_urls.urlpatterns,
]


@pytest.fixture
def series_kind(monkeypatch):
    """The tables of the test's models, and its kind registered for this test only."""
    with connection.schema_editor() as editor:
        editor.create_model(Series)
        editor.create_model(Bout)
    # The registry is one dict that every reader holds (the API, the navigation, the sockets): restored in place.
    registered = dict(kinds.KINDS)
    monkeypatch.setattr(runner, "_work", dict(runner._work))
    monkeypatch.setattr(runner, "_sweeps", list(runner._sweeps))
    # -- the one line a new kind adds to its app's ready() --
    kinds.register(SERIES)
    yield SERIES
    kinds.KINDS.clear()
    kinds.KINDS.update(registered)
    with connection.schema_editor() as editor:
        editor.delete_model(Bout)
        editor.delete_model(Series)


def _series(bouts: int, **fields: Any) -> Series:
    series = Series.objects.create(name="Best of three", topic="Tea is better than coffee", concurrency=1, **fields)
    Bout.objects.bulk_create([Bout(series=series, order=i) for i in range(bouts)])
    return series


def _wait_settled(kind: BatchKind, series: Series, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not kind.is_settled(series.pk):
        assert time.monotonic() < deadline, "the series did not settle in time"
        time.sleep(0.1)
    inline.wait_idle()


def test_a_new_kind_runs_to_the_end_one_debate_at_a_time(llm_server, series_kind):
    series = _series(3)
    series_kind.start(series)
    _wait_settled(series_kind, series)
    series.refresh_from_db()
    assert series.status == Series.Status.COMPLETED and series.finished_at is not None
    debates = list(Debate.objects.order_by("started_at"))
    assert len(debates) == 3 and all(d.status == Debate.Status.COMPLETED for d in debates)
    # Concurrency 1: each duel started after the one before finished (the finished debate's wake started it).
    assert all(a.finished_at <= b.started_at for a, b in pairwise(debates))
    figures = series_kind.progress(series)
    assert (figures.total, figures.done, figures.failed, figures.eta_text) == (3, 3, 0, "")


def test_a_new_kind_pauses_shares_and_deletes_as_every_kind(llm_server, series_kind, django_user_model):
    owner = django_user_model.objects.create_user("owner", password="x")
    series = _series(2, owner=owner)
    series_kind.pause(series)
    series_kind.advance(series.pk)
    assert Debate.objects.count() == 0 and series_kind.is_settled(series.pk)
    series_kind.resume(series)
    _wait_settled(series_kind, series)
    series_kind.set_visibility(series, sharing.Visibility.UNLISTED)
    assert set(Debate.objects.values_list("visibility", flat=True)) == {"unlisted"}
    assert set(Debate.objects.values_list("owner__username", flat=True)) == {"owner"}
    series_kind.delete(series)
    assert not Series.objects.exists() and not Debate.objects.exists()


# -- its faces ---------------------------------------------------------------------------------------------------
@pytest.fixture
def with_pages(settings):
    """The root URLconf with the kind's urls.py included (this module's `urlpatterns`)."""
    settings.ROOT_URLCONF = __name__


def _run(kind: BatchKind, series: Series) -> Series:
    kind.start(series)
    _wait_settled(kind, series)
    series.refresh_from_db()
    return series


def test_a_new_kind_with_pages_is_in_the_navigation_and_its_page_is_live(
    llm_server, series_kind, with_pages, people, client
):
    series = _run(series_kind, create_series("Best of two", "Tea is better than coffee", 2, owner=people["owner"]))
    client.force_login(people["owner"])
    nav = client.get("/").content.decode().split("<nav")[1].split("</nav>")[0]
    # The kinds in the order they registered (the site's, then this one), each at its app's address by its plural:
    # in the bar after the rooms, and again under "More" (what a phone shows in their place).
    site = [kind.model._meta for kind in kinds.KINDS.values() if kind is not series_kind]
    listed = [(f"/{meta.app_label}/", str(meta.verbose_name_plural).capitalize()) for meta in site]
    listed += [("/batches/", "Series")]
    bar = re.findall(r'<a class="wide-only" href="([^"]+)">([^<]+)</a>', nav)
    assert bar == listed
    more = nav.split('<details class="nav-menu nav-more">')[1].split("</details>")[0]
    assert re.findall(r'<a href="([^"]+)">([^<]+)</a>', more) == listed
    assert nav.index('<a href="/rooms/">Rooms</a>') < nav.index('class="wide-only"')
    listing = client.get("/batches/").content.decode()
    assert "<h1>Series</h1>" in listing and f'<a href="/batches/{series.pk}/">Best of two</a>' in listing
    detail = client.get(f"/batches/{series.pk}/").content.decode()
    assert f'ws-connect="/ws/seriess/{series.pk}/"' in detail

    async def watch() -> tuple[str, str, bool]:
        application = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        socket = WebsocketCommunicator(application, f"/ws/seriess/{series.pk}/")
        socket.scope["user"] = people["owner"]
        connected, _ = await socket.connect()
        assert connected
        first = await socket.receive_from()
        await sync_to_async(series_kind.push)(series.pk)
        pushed = await socket.receive_from()
        await socket.disconnect()
        # A stranger may not open a private series's socket, as its page.
        stranger = WebsocketCommunicator(application, f"/ws/seriess/{series.pk}/")
        stranger.scope["user"] = people["other"]
        let_in, _ = await stranger.connect()
        return first, pushed, let_in

    first, pushed, let_in = asyncio.run(watch())
    assert "Completed" in first and '<span class="t-done">2</span> done' in first
    assert pushed.startswith('<div id="progress" hx-swap-oob="true">') and "Completed" in pushed and not let_in


def test_a_new_kinds_command_runs_a_spec_and_says_where_it_is(llm_server, series_kind, people, tmp_path, settings):
    spec = tmp_path / "series.yaml"
    spec.write_text("name: Best of two\ntopic: Tea is better than coffee\nbouts: 2\n")
    out = StringIO()
    call_command(SeriesCommand(), "run", str(spec), "--owner", "olive", stdout=out)
    series = Series.objects.get()
    assert series.status == "completed" and Debate.objects.filter(status="completed").count() == 2
    text = out.getvalue()
    assert "Best of two: 2 duels on 'Tea is better than coffee'" in text
    # With no pages, the command says so, and where the API has it.
    api = f"{settings.CHAOSLM_SITE_URL}/api/v1/batches/series/{series.pk}"
    assert f"Page: none (no page shows a series); the API has it at {api}" in text
    assert f"Best of two (#{series.pk}): completed, 2 of 2 duels done, 0 failed." in text
    out = StringIO()
    call_command(SeriesCommand(), "report", str(series.pk), "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"name": "Best of two", "duels": 2}


def test_a_new_kind_is_served_by_the_apis_batch_routes(llm_server, series_kind, people, client):
    _, raw = create_token(people["owner"], "series", read_only=False)
    api = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}

    def post(path: str) -> Any:
        return client.post(path, content_type="application/json", **api)

    kinds_listed = client.get("/api/v1/batches", **api).json()
    assert {"kind": "series", "noun": "series", "plural": "series"} in kinds_listed
    series = create_series("Best of two", "Tea is better than coffee", 2, owner=people["owner"])
    base = f"/api/v1/batches/series/{series.pk}"

    paused = post(f"{base}/pause")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert paused.json()["url"] is None  # no pages
    assert post(f"{base}/pause").json()["detail"] == "A paused series cannot be paused."
    assert post(f"{base}/resume").json()["status"] in ("running", "completed")
    _wait_settled(series_kind, series)
    status = client.get(base, **api).json()
    assert status["status"] == "completed"
    assert (status["progress"]["total"], status["progress"]["done"]) == (2, 2)
    assert client.get("/api/v1/batches/series", **api).json()["results"][0]["id"] == series.pk

    # The page's rules: a stranger's token sees nothing of a private series; an unknown kind is named.
    _, other = create_token(people["other"], "other", read_only=False)
    assert client.get(base, HTTP_AUTHORIZATION=f"Bearer {other}").status_code == 404
    unknown = client.get("/api/v1/batches/sprints/1", **api)
    assert unknown.status_code == 404 and "There is no kind of batch called 'sprints'" in unknown.json()["detail"]

    assert client.delete(base, **api).status_code == 204
    assert not Series.objects.exists() and not Debate.objects.exists()


def test_a_new_kinds_end_is_told_to_its_owners_webhooks(llm_server, series_kind, people, client, settings):
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = "127.0.0.1/32"  # the receiver is on this machine
    _, raw = create_token(people["owner"], "hooks", read_only=False)
    api = {"HTTP_AUTHORIZATION": f"Bearer {raw}", "content_type": "application/json"}
    receiver = Receiver()
    try:
        body = {"url": receiver.url, "secret": "s" * 16, "events": ["series.finished"]}
        assert client.post("/api/v1/webhooks", body, **api).status_code == 201
        refused = client.post("/api/v1/webhooks", {**body, "events": ["sprint.finished"]}, **api)
        assert refused.status_code == 422 and "There is no event 'sprint.finished'" in refused.json()["detail"]
        client.force_login(people["owner"])
        assert 'value="series.finished"' in client.get("/account/webhooks/").content.decode()

        series = _run(series_kind, create_series("Best of two", "Tea is better than coffee", 2, owner=people["owner"]))
        deadline = time.monotonic() + 30
        while not receiver.received:
            assert time.monotonic() < deadline, "no delivery"
            time.sleep(0.05)
        told = json.loads(receiver.received[0].body)
        assert (
            told["type"] == "series.finished" and receiver.received[0].headers["X-ChaosLM-Event"] == "series.finished"
        )
        assert told["series"] == {
            "id": series.pk,
            "name": "Best of two",
            "status": "completed",
            "progress": {"total": 2, "done": 2, "failed": 0},
        }
    finally:
        receiver.close()
