"""A new kind of batch is a short list of files (docs/adding-a-batch-kind.md): here, a "series" of duels on one topic
between the same two personas, made of the two files that run it (its models, its `BatchKind`) and one line
registering it. Everything else (one pass at a time under the owner's cap, the inline loop, the wake of a finished
debate, pausing, the progress and its ETA, visibility, deleting) is batches/kinds.py's, unchanged."""

from __future__ import annotations

import time
from itertools import pairwise
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, models
from django.db.models import F
from django.test.utils import isolate_apps

from batches import kinds, schedule
from batches.kinds import BatchKind
from batches.models import BatchRecord
from batches.progress import ProgressView, jobs_from_rows, progress_view, settings_of
from chaoslm import runner, sharing
from chaoslm.runner import inline
from debates.models import Debate
from debates.setup import SeatChoice, create_debate
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
        return ""  # no page: nothing to push


def _duel_calls(job: schedule.Job) -> int:
    return 4 * 2 + 6  # a judged duel of 2 turns


SERIES = SeriesKind()


@pytest.fixture
def series_kind(monkeypatch):
    """The tables of the test's models, and its kind registered for this test only."""
    with connection.schema_editor() as editor:
        editor.create_model(Series)
        editor.create_model(Bout)
    monkeypatch.setattr(kinds, "KINDS", dict(kinds.KINDS))
    monkeypatch.setattr(runner, "_work", dict(runner._work))
    monkeypatch.setattr(runner, "_sweeps", list(runner._sweeps))
    # -- the one line a new kind adds to its app's ready() --
    kinds.register(SERIES)
    yield SERIES
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
