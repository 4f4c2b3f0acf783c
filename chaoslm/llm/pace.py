"""How fast a model writes, measured on the reply it is streaming, in tokens a second.

The embedded model's speed is the machine's: about 120 tokens a second on idle cores, under 10 on a
busy laptop. A debate there is slow, not broken, and its status line says why ("local model at 7
tokens/s"). No Django here: the gateway measures, and loads without Django.
"""

from __future__ import annotations

import time

# Below this a status line names the model's speed: a reply of a hundred words then takes over ten seconds.
SLOW_TOKENS_PER_SECOND = 20.0
# The first reading waits for this much writing: a rate from a few chunks in a burst says nothing.
FIRST_READING_SECONDS = 1.0
# Between two readings: a status line redrawn every token would cost more than the model's slowness.
READING_INTERVAL = 2.0


class PaceMeter:
    """Counts a stream's chunks (one token each, as llama.cpp and OpenAI stream them) from the first one on."""

    def __init__(self) -> None:
        self.first = 0.0
        self.chunks = 0
        self.last_reading = 0.0

    def chunk(self, now: float | None = None) -> float | None:
        """Count one chunk; the rate so far when a new reading is due, else None."""
        now = time.monotonic() if now is None else now
        self.chunks += 1
        if self.chunks == 1:
            self.first = self.last_reading = now
            return None
        due = FIRST_READING_SECONDS if self.last_reading == self.first else READING_INTERVAL
        if now - self.last_reading < due:
            return None
        self.last_reading = now
        return (self.chunks - 1) / (now - self.first)


def slow_note(tokens_per_second: float | None) -> str:
    """The status line's note on a slow model ("local model at 7 tokens/s"), or "" when it is not slow."""
    if tokens_per_second is None or tokens_per_second >= SLOW_TOKENS_PER_SECOND:
        return ""
    return f"local model at {max(1, round(tokens_per_second))} tokens/s"


# The model's prompt speeds (prompt tokens over the wait for the first token) last measured, by server. The
# slowest of them sizes the next wait: a prompt that shares its start with the previous one is read from the
# server's cache in no time, and says nothing of how fast a new one is read.
_PROMPT_READINGS = 8
_prompt_rates: dict[str, list[float]] = {}


def record_prompt(base_url: str, prompt_tokens: int, seconds: float) -> None:
    """A reply's first token came `seconds` after its request of `prompt_tokens` went out."""
    if prompt_tokens > 0 and seconds > 0:
        readings = _prompt_rates.setdefault(base_url, [])
        readings.append(prompt_tokens / seconds)
        del readings[:-_PROMPT_READINGS]


def first_token_allowance(base_url: str, prompt_tokens: int, timeout: float) -> float:
    """The silence to allow before a reply's first token: the timeout, plus twice the time the model's slowest
    recent prompt speed needs for `prompt_tokens`.

    The model reads the whole prompt before it writes a token, and a long prompt on a busy machine takes
    longer than the timeout to read: that silence is work, not a hung server. Added to the timeout rather than
    compared with it: a short prompt's first token also waits for what every request costs (the chat template,
    the first step of writing), which the speed measured on a long prompt leaves out, and on a busy machine
    that alone can come near the timeout."""
    readings = _prompt_rates.get(base_url)
    if not readings:
        return timeout
    return timeout + 2 * prompt_tokens / min(readings)
