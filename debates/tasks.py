"""The debate's work for the runner (chaoslm/runner.py): the coroutine, and its Celery task for
CHAOSLM_RUNNER=celery. A redelivered task is safe: the engine's steps are idempotent."""

from celery import shared_task

from chaoslm.runner import run_on_process_loop
from debates.broadcast import DebateBroadcaster
from debates.engine import DebateDeleted, run_debate
from debates.recovery import recover


async def advance(debate_id: int) -> str:
    """Run (or continue) a debate, pushing it live to its page; returns its status ("deleted" if it is gone)."""
    try:
        debate = await run_debate(debate_id, DebateBroadcaster(debate_id))
    except DebateDeleted:
        return "deleted"
    return debate.status


@shared_task(acks_late=True, reject_on_worker_lost=True)
def advance_debate(debate_id: int) -> str:
    return run_on_process_loop(advance(debate_id))


@shared_task
def recover_stalled() -> list[int]:
    """The periodic sweep (Celery beat): resume debates whose work stopped."""
    return recover()
