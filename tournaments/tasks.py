"""Celery tasks for CHAOSLM_RUNNER=celery. A redelivered task is safe: a pass only starts what has not started."""

from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from tournaments import services, stats


@shared_task(acks_late=True, reject_on_worker_lost=True)
def advance_tournament(tournament_id: int, token: str = "") -> None:
    services.tick(tournament_id, token)


@shared_task
def sweep_tournaments() -> list[int]:
    """The periodic sweep (Celery beat): restart the tick chain of running tournaments that lost theirs."""
    return services.sweep()


@worker_ready.connect
def _load_report_libraries(**_: Any) -> None:
    """A worker runs tournaments and draws their live leaderboards: import what a report needs in the
    background now, not in the middle of the first leaderboard (see tournaments/stats.py)."""
    if settings.CHAOSLM_PRELOAD_REPORT_LIBRARIES:
        stats.load_libraries_in_background()
