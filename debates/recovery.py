"""Finding debates whose work stopped (a killed worker, a restarted server) and starting them again."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Max
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from chaoslm import runner
from debates import hold
from debates.models import Debate

# Under Celery, a held debate whose start time passed this long ago and that has not started lost its
# scheduled start (a worker lost with the task): the sweep submits it again.
HELD_GRACE = 30.0


def stalled_debates(older_than: float | None = None) -> list[Debate]:
    """Running debates whose work stopped: the process running them has ended (known at once, whatever their
    age), or, where that cannot be told (a worker on another host), no new event (and no start) for
    `older_than` seconds. A debate its process is still running is not stalled, however slow."""
    seconds = settings.CHAOSLM_STALLED_AFTER if older_than is None else older_than
    cutoff = timezone.now() - timedelta(seconds=seconds)
    running = Debate.objects.filter(status=Debate.Status.RUNNING).annotate(
        progress=Greatest(Coalesce(Max("events__created_at"), "started_at"), "started_at")
    )
    stalled = []
    for debate in running:
        ended = runner.gone(debate.runner)
        if ended or (ended is None and debate.progress is not None and debate.progress < cutoff):
            stalled.append(debate)
    return stalled


def recover(older_than: float | None = None) -> list[int]:
    """Start every stalled debate again on the configured runner, and schedule again the start of held ones;
    return their ids.

    The inline runner sweeps as the server starts, when every wait for a held start was lost with the old
    process: each is scheduled again. Celery keeps its tasks: only a start that is overdue is submitted."""
    ids = [d.pk for d in stalled_debates(older_than)]
    for debate_id in ids:
        runner.submit("debate", debate_id)
    overdue = timezone.now() - timedelta(seconds=HELD_GRACE) if settings.CHAOSLM_RUNNER == "celery" else None
    for debate in hold.held_debates(due_before=overdue):
        hold.schedule(debate)
        ids.append(debate.pk)
    return ids
