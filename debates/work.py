"""The debate's work on the runner (chaoslm/runner.py): the coroutines that run a debate and a held debate's
start, inline or inside debates/tasks.py's Celery tasks. Here, not in the tasks module, so that the inline runner
never imports Celery."""

import asyncio

from asgiref.sync import sync_to_async

from debates import hold
from debates.broadcast import DebateBroadcaster
from debates.engine import DebateDeleted, run_debate


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
