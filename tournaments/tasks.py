"""Celery tasks for CHAOSLM_RUNNER=celery. A redelivered task is safe: a pass only starts what has not started."""

from celery import shared_task

from tournaments import services


@shared_task(acks_late=True, reject_on_worker_lost=True)
def advance_tournament(tournament_id: int, token: str = "") -> None:
    services.tick(tournament_id, token)


@shared_task
def sweep_tournaments() -> list[int]:
    """The periodic sweep (Celery beat): restart the tick chain of running tournaments that lost theirs."""
    return services.sweep()
