"""Celery tasks for CHAOSLM_RUNNER=celery. A redelivered task is safe: the engine's steps are idempotent."""

from celery import shared_task

from debates.runner import run_on_process_loop


@shared_task(acks_late=True, reject_on_worker_lost=True)
def advance_debate(debate_id: int) -> str:
    from debates.broadcast import DebateBroadcaster
    from debates.engine import run_debate

    debate = run_on_process_loop(run_debate(debate_id, DebateBroadcaster(debate_id)))
    return debate.status


@shared_task
def recover_stalled() -> list[int]:
    """The periodic sweep (Celery beat): resume debates whose work stopped."""
    from debates.recovery import recover

    return recover()
