from collections.abc import Iterable
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.signals import request_started

from chaoslm.metrics_sources import GaugeReading


def _load_report_libraries_once(**kwargs: Any) -> None:
    request_started.disconnect(_load_report_libraries_once)
    from batches import stats

    stats.load_libraries_in_background()


def batch_progress() -> Iterable[GaugeReading]:
    """/metrics (chaoslm/metrics.py): each running batch's debates done, running, failed and in all."""
    from batches.kinds import KINDS, RUNNING

    reading = GaugeReading(
        "chaoslm_batch_debates",
        "A running batch's debates, by state (done, running, failed, total)",
        ["kind", "batch", "state"],
    )
    for name, kind in KINDS.items():
        for batch in kind.model.objects.filter(status=RUNNING):
            progress = kind.progress(batch)
            for state in ("done", "running", "failed", "total"):
                reading.rows.append(([name, str(batch.pk), state], getattr(progress, state)))
    yield reading


class BatchesConfig(AppConfig):
    name = "batches"

    def ready(self) -> None:
        from batches import kinds
        from chaoslm import metrics_sources

        # Each kind registers itself from its own app's ready (tournaments/apps.py, experiments/apps.py).
        kinds.connect_signals()
        metrics_sources.register(batch_progress)
        if settings.CHAOSLM_PRELOAD_REPORT_LIBRARIES:
            request_started.connect(_load_report_libraries_once)
