"""The debate's Celery tasks for CHAOSLM_RUNNER=celery (the coroutines they run are debates/work.py's).
A redelivered task is safe: the engine's steps are idempotent."""

from celery import shared_task

from chaoslm.runner import run_on_process_loop
from debates.recovery import recover
from debates.work import advance, start_when_due


@shared_task(acks_late=True, reject_on_worker_lost=True)
def start_held_debate(debate_id: int) -> str:
    return run_on_process_loop(start_when_due(debate_id))


@shared_task(acks_late=True, reject_on_worker_lost=True)
def advance_debate(debate_id: int) -> str:
    return run_on_process_loop(advance(debate_id))


@shared_task
def recover_stalled() -> list[int]:
    """The periodic sweep (Celery beat): resume debates whose work stopped."""
    return recover()
