"""How long a debate will take, for the forms that start one: its calls at its options, at the pace recent calls
went; before any, at the embedded model's speed on this machine as its supervisor measured it when it started,
else a guess for the kind of model in use."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.conf import settings

from chaoslm.llm import local_model, local_status
from debates.models import Event

# Seconds a call takes when no call has been timed nor the embedded model's speed measured: the embedded model on a
# CPU, or a hosted model.
GUESS_EMBEDDED = 8.0
GUESS_HOSTED = 4.0
# The pace is that of this many of the latest timed calls.
RECENT_CALLS = 50
# A debate's call on the embedded model, for its measured speed to give seconds a call: the shortened first duel's
# prompts (a persona, its instructions, the transcript so far) average some 350 tokens on the test server, a judge's
# read the whole transcript; a speech of 60 words is some 80 tokens, which SmolLM2 often writes past to its cap.
TYPICAL_PROMPT_TOKENS = 500
TYPICAL_REPLY_TOKENS = 120


@dataclass(frozen=True)
class Pace:
    """How long a call takes here: the mean of this site's latest timed calls (`measured`), else a typical call at
    the embedded model's speed measured on this machine (`machine`), else the guess for the model in use."""

    seconds: float
    measured: bool
    embedded: bool
    machine: bool = False

    def words(self) -> str:
        """What the pace is, for an estimate's note: "at this site's recent pace, 3.2 s a call"."""
        each = f"{self.seconds:.1f} s a call"
        if self.measured:
            return f"at this site's recent pace, {each}"
        if self.machine:
            return f"at the embedded model's speed measured on this machine, {each}: no call timed yet"
        model = "the embedded model" if self.embedded else "a hosted model"
        return f"at a guess of {each} for {model}: no call timed yet"


def pace() -> Pace:
    """The pace of the latest timed calls; before any, a typical call at the embedded model's measured speed
    (`local_status.speed_at`), or the guess for the model in use."""
    recent = list(
        Event.objects.filter(latency_ms__gt=0).order_by("-pk").values_list("latency_ms", flat=True)[:RECENT_CALLS]
    )
    embedded = local_model.in_use()
    if recent:
        return Pace(sum(recent) / len(recent) / 1000, True, embedded)
    machine = measured_pace()
    if machine is not None:
        return Pace(machine, False, embedded, machine=True)
    return Pace(GUESS_EMBEDDED if embedded else GUESS_HOSTED, False, embedded)


@dataclass(frozen=True)
class Duration:
    """How long a batch's calls take, from its fewest to its most (a stop condition may end a debate early): at
    `pace`, `at_once` calls answered together. What every form, command and API estimate of a batch says."""

    low: float  # seconds
    high: float
    pace: Pace
    at_once: int

    @property
    def minutes(self) -> str:
        """ "about 2 minutes", "under a minute to 2 minutes"."""
        return minutes_between(self.low, self.high)

    @property
    def basis(self) -> str:
        """How the time was reckoned: "6 calls at once, at this site's recent pace, 3.2 s a call"."""
        return f"{self.at_once} call{'s' if self.at_once != 1 else ''} at once, {self.pace.words()}"

    def sentence(self) -> str:
        return f"It will take {self.minutes} ({self.basis})."

    def as_json(self) -> dict[str, object]:
        """The API's `time`."""
        return {
            "low_seconds": round(self.low, 1),
            "high_seconds": round(self.high, 1),
            "text": self.minutes,
            "seconds_per_call": round(self.pace.seconds, 3),
            "measured": self.pace.measured,
            "calls_at_once": self.at_once,
            "basis": self.basis,
        }


def duration(fewest: int, most: int, debates: int, concurrency: int) -> Duration:
    """The time `debates` debates making `fewest` to `most` calls take, `concurrency` of them at once."""
    at_once = calls_at_once(min(max(concurrency, 1), max(debates, 1)))
    each = pace()
    return Duration(fewest * each.seconds / at_once, most * each.seconds / at_once, each, at_once)


def seconds_per_call() -> float:
    """The mean time of the latest timed calls; before any, the embedded model's measured pace or a guess."""
    return pace().seconds


def measured_pace() -> float | None:
    """A typical call's seconds at the embedded model's speed on this machine, as its live supervisor measured it;
    None when another model serves or no speed was measured."""
    if not local_model.in_use():
        return None
    speed = local_status.speed_at(local_model.base_url())
    return measured_seconds(speed) if speed is not None else None


def measured_seconds(speed: local_status.Speed) -> float:
    """A typical debate call's seconds at `speed`, its reply no longer than the embedded model's cap."""
    reply = min(TYPICAL_REPLY_TOKENS, settings.CHAOSLM_LOCAL_MAX_TOKENS or TYPICAL_REPLY_TOKENS)
    seconds = reply / speed.write_per_second
    if speed.prompt_per_second is not None:  # else the write speed measured already took the prompt in
        seconds += TYPICAL_PROMPT_TOKENS / speed.prompt_per_second
    return seconds


def calls_at_once(debates: int) -> int:
    """How many calls `debates` debates running at once have answered together, for a time estimate: a debate's
    calls mostly follow one another, and the embedded model answers as many as it has slots (CHAOSLM_LOCAL_SLOTS),
    the rest waiting their turn."""
    if local_model.in_use():
        return max(1, min(debates, local_model.chosen().slots))
    return max(1, debates)


def describe(calls: int, fewest: int | None = None) -> str:
    """ "N calls, about M minutes" at the current pace; with `fewest` (a debate that may stop early), the range:
    "4 to 9 calls, about 1 to 2 minutes"."""
    each = seconds_per_call()
    if fewest is not None and fewest < calls:
        return f"{fewest} to {calls} calls, {minutes_between(fewest * each, calls * each)}"
    return f"{calls} call{'' if calls == 1 else 's'}, {_minutes(calls * each)}"


def minutes_between(low: float, high: float) -> str:
    """A time from `low` to `high` seconds in minutes: "about 1 to 2 minutes", "under a minute to 2 minutes",
    "about 3 minutes" when both round alike."""
    said_low, said_high = _minutes(low), _minutes(high)
    if said_low == said_high:
        return said_low
    return f"{said_low.removesuffix(' minutes').removesuffix(' minute')} to {said_high.removeprefix('about ')}"


def _minutes(seconds: float) -> str:
    minutes = math.ceil(seconds / 60)
    return "under a minute" if seconds < 60 else f"about {minutes} minute{'' if minutes == 1 else 's'}"
