"""How long a debate will take, for the forms that start one: its calls at its options, at the pace recent calls
went (else a guess for the kind of model in use)."""

from __future__ import annotations

import math

from chaoslm.llm import local_model
from debates.models import Event

# Seconds a call takes when no call has been timed yet: the embedded model on a CPU, or a hosted model.
GUESS_EMBEDDED = 8.0
GUESS_HOSTED = 4.0
# The pace is that of this many of the latest timed calls.
RECENT_CALLS = 50


def seconds_per_call() -> float:
    """The mean time of the latest timed calls, or a guess for the model in use when none was timed."""
    recent = list(
        Event.objects.filter(latency_ms__gt=0).order_by("-pk").values_list("latency_ms", flat=True)[:RECENT_CALLS]
    )
    if recent:
        return sum(recent) / len(recent) / 1000
    return GUESS_EMBEDDED if local_model.in_use() else GUESS_HOSTED


def describe(calls: int) -> str:
    """ "N calls, about M minutes" at the current pace."""
    seconds = calls * seconds_per_call()
    minutes = math.ceil(seconds / 60)
    said = "under a minute" if seconds < 60 else f"about {minutes} minute{'' if minutes == 1 else 's'}"
    return f"{calls} call{'' if calls == 1 else 's'}, {said}"
