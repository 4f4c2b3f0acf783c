"""Finding debates whose work stopped (a killed worker, a restarted server) and starting them again."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Max
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from chaoslm import runner
from debates.models import Debate


def stalled_debates(older_than: float | None = None) -> list[Debate]:
    """Running debates with no new event (and no start) for `older_than` seconds."""
    seconds = settings.CHAOSLM_STALLED_AFTER if older_than is None else older_than
    cutoff = timezone.now() - timedelta(seconds=seconds)
    return list(
        Debate.objects.filter(status=Debate.Status.RUNNING)
        .annotate(progress=Greatest(Coalesce(Max("events__created_at"), "started_at"), "started_at"))
        .filter(progress__lt=cutoff)
    )


def recover(older_than: float | None = None) -> list[int]:
    """Start every stalled debate again on the configured runner; return their ids."""
    ids = [d.pk for d in stalled_debates(older_than)]
    for debate_id in ids:
        runner.submit("debate", debate_id)
    return ids
