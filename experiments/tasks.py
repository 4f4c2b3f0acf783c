"""Celery tasks for CHAOSLM_RUNNER=celery. A redelivered task is safe: a pass only starts what has not started."""

from celery import shared_task

from experiments import work


@shared_task(acks_late=True, reject_on_worker_lost=True)
def advance_experiment(experiment_id: int, token: str = "") -> None:
    work.tick(experiment_id, token)


@shared_task
def sweep_experiments() -> list[int]:
    """The periodic sweep (Celery beat): restart the tick chain of running experiments that lost theirs."""
    return work.sweep()
