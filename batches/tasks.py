"""Celery tasks for CHAOSLM_RUNNER=celery, one pair for every kind of batch. A redelivered task is safe: a pass only
starts what has not started."""

from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from batches import kinds, stats


@shared_task(acks_late=True, reject_on_worker_lost=True)
def advance_batch(kind: str, batch_id: int, token: str = "") -> None:
    kinds.KINDS[kind].tick(batch_id, token)


@shared_task
def sweep_batches() -> list[int]:
    """The periodic sweep (Celery beat): restart the tick chain of every running batch that lost its own."""
    return [batch_id for kind in kinds.KINDS.values() for batch_id in kind.sweep()]


@worker_ready.connect
def _load_report_libraries(**_: Any) -> None:
    """A worker runs batches and draws their live reports: import what a report needs in the background now, not
    in the middle of the first leaderboard (see batches/stats.py)."""
    if settings.CHAOSLM_PRELOAD_REPORT_LIBRARIES:
        stats.load_libraries_in_background()
