"""The debate's work for the runner (chaoslm/runner.py): the coroutine, and its Celery task for
CHAOSLM_RUNNER=celery. A redelivered task is safe: the engine's steps are idempotent."""

import asyncio

from asgiref.sync import sync_to_async
from celery import shared_task

from chaoslm.runner import run_on_process_loop
from debates import hold
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


async def start_when_due(debate_id: int) -> str:
    """A held debate's start (debates/hold.py), submitted for its start time: take the start and run it.

    Returns "started" when there was nothing to start (it started already, or is gone), "held" when it is still
    held for a while (scheduled for an earlier start time: the later schedule starts it), else its status."""
    left = await sync_to_async(hold.seconds_left)(debate_id)
    if left is None:
        return "started"
    if left >= hold.EARLY_SLACK:
        return "held"
    if left > 0:
        await asyncio.sleep(left)
    if not await sync_to_async(hold.claim)(debate_id):
        return "started"
    return await advance(debate_id)


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
