"""Reading the judge's answer: parsed strictly, asked again once, never guessed."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from debates.formats.evidence.prompts import LETTERS, NO_QUESTION

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)


def parse_answer(text: str) -> dict[str, float] | None:
    """The judge's probabilities for A and B, or None: exactly a JSON object {"A": p, "B": q}, each from 0 to 1,
    adding up to 1 within 0.01 (a ```json fence around it is allowed). Nothing else is read as an answer."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        value = json.loads(body)
    except ValueError:
        return None
    if not isinstance(value, dict) or set(value) != set(LETTERS):
        return None
    probabilities = {}
    for letter in LETTERS:
        p = value[letter]
        if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p) or not 0 <= p <= 1:
            return None
        probabilities[letter] = float(p)
    if abs(sum(probabilities.values()) - 1) > 0.01:
        return None
    return probabilities


@dataclass(frozen=True)
class Answer:
    """The judge's answer as recorded: its probabilities (None: unparsed), and how many calls it took."""

    probabilities: dict[str, float] | None
    attempts: int

    @property
    def choice(self) -> str | None:
        """The answer the judge favours; None when unparsed or when it gives both the same probability."""
        if self.probabilities is None or self.probabilities["A"] == self.probabilities["B"]:
            return None
        return max(LETTERS, key=lambda letter: self.probabilities[letter])  # type: ignore[index]


def asks_nothing(reply: str) -> bool:
    """The consultancy judge declined to ask: it replied NO QUESTION (any case, quoted, with a full stop)."""
    return reply.strip().strip("\"'.!").strip().upper() == NO_QUESTION


def read_answer(first: str | None, second: str | None) -> Answer | None:
    """The answer from the judge's first reply and, if that was unreadable, its second; None until it is in."""
    if first is None:
        return None
    parsed = parse_answer(first)
    if parsed is not None:
        return Answer(parsed, 1)
    if second is None:
        return None
    return Answer(parse_answer(second), 2)
