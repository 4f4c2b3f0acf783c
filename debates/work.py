"""The debate's work on the runner (chaoslm/runner.py): the coroutine that runs a debate, inline or inside
debates/tasks.py's Celery task. Here, not in the tasks module, so that the inline runner never imports Celery."""

from debates.broadcast import DebateBroadcaster
from debates.engine import DebateDeleted, run_debate


async def advance(debate_id: int) -> str:
    """Run (or continue) a debate, pushing it live to its page; returns its status ("deleted" if it is gone)."""
    try:
        debate = await run_debate(debate_id, DebateBroadcaster(debate_id))
    except DebateDeleted:
        return "deleted"
    return debate.status
