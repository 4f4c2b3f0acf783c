"""How a card decides: answers a speech gives, agreement among a round's answers, and decision rules over them.

Pure functions of stored answers, so a resumed debate stops and decides exactly where its first run would have.
An answer is the `answer` field of a speech's JSON reply (`{"reasoning": "...", "answer": ...}`), validated by
its schema as the judge's JSON is; a reply still invalid after the gateway's attempts is stored as a fallback
and gives no answer (an abstention).
"""

from __future__ import annotations

import dataclasses
import math
import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ANSWER_KINDS = ("number", "text", "choice", "some", "ranking", "side")
RULES = ("plurality", "majority", "unanimity", "approval", "borda", "mean", "judge")
# Which answer kinds each rule reads.
RULE_KINDS = {
    "plurality": ("number", "text", "choice", "side"),
    "majority": ("number", "text", "choice", "side"),
    "unanimity": ("number", "text", "choice", "side"),
    "approval": ("some",),
    "borda": ("ranking",),
    "mean": ("number",),
    "judge": ANSWER_KINDS,
}
TIES = ("none", "first")
MAX_TEXT_ANSWER = 200  # characters of a short-text answer


@dataclass(frozen=True)
class AnswerSpec:
    """What a speech's answer is: a number, a short text, one of `choices`, some of them (approval), all of
    them best first (a ranking), or one of the debate's sides (`side`: by the names its verdict gives them, which
    only the debate knows, so `names` are given with each call)."""

    kind: str
    choices: tuple[str, ...] = ()

    def schema(self, names: Sequence[str] = ()) -> dict[str, Any]:
        if self.kind == "side":
            answer: dict[str, Any] = {"type": "string", "enum": list(names)}
        elif self.kind == "number":
            answer = {"type": "number"}
        elif self.kind == "text":
            answer = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT_ANSWER}
        elif self.kind == "choice":
            answer = {"type": "string", "enum": list(self.choices)}
        else:
            answer = {"type": "array", "items": {"type": "string", "enum": list(self.choices)}, "uniqueItems": True}
            answer["minItems"] = len(self.choices) if self.kind == "ranking" else 1
            if self.kind == "ranking":
                answer["maxItems"] = len(self.choices)
        return {
            "type": "object",
            "properties": {"reasoning": {"type": "string"}, "answer": answer},
            "required": ["reasoning", "answer"],
        }

    def example(self, names: Sequence[str] = ()) -> str:
        """The answer's shape, as the `{answer_format}` placeholder words it (a side's: its debate's `names`)."""
        if self.kind == "side":
            return "one of " + _quoted(names) if names else "the name of one side"
        if self.kind == "number":
            return "a number"
        if self.kind == "text":
            return "a short answer"
        if self.kind == "choice":
            return "one of " + _quoted(self.choices)
        if self.kind == "some":
            return "a list of the choices you approve of, from " + _quoted(self.choices)
        return "a list of every one of " + _quoted(self.choices) + ", best first"

    def format_text(self, names: Sequence[str] = ()) -> str:
        return f'Reply with JSON only: {{"reasoning": "your reasoning", "answer": {self.example(names)}}}'


def _quoted(choices: Sequence[str]) -> str:
    return ", ".join(f'"{c}"' for c in choices)


def given(data: Mapping[str, Any]) -> Any:
    """The answer a stored speech gave, or None (no answer: a fallback, or not an answering speech)."""
    if not data.get("answer_kind") or data.get("fallback"):
        return None
    return data.get("answer")


def shown(value: Any) -> str:
    """An answer as pages, exports and other speakers read it."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def spoken(content: str, data: Mapping[str, Any]) -> str:
    """What an answering speech says, as other seats and pages read it: its reasoning, then its answer; the raw
    reply when it gave no valid answer."""
    value = given(data)
    if value is None:
        return content
    reasoning = str(data.get("reasoning", "")).strip()
    line = f"Answer: {shown(value)}"
    return f"{reasoning}\n\n{line}" if reasoning else line


_NUMBER = re.compile(r"[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def key(value: Any) -> Any:
    """An answer's identity for counting votes: numbers by value (1, 1.0 and "1" agree; "1,234" is 1234), texts
    by the SQuAD normalisation (lower case, no punctuation, no articles, single spaces), lists as tuples."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return round(float(value), 9) + 0.0
    if isinstance(value, list):
        return tuple(value)
    number = _NUMBER.fullmatch(str(value).strip().rstrip("."))
    if number:
        return round(float(number.group(0).replace(",", "")), 9) + 0.0
    text = str(value).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


@dataclass(frozen=True)
class Vote:
    seat: str
    name: str
    answer: Any
    invalid: bool = (
        False  # its reply gave no valid answer after the gateway's attempts: an abstention it did not choose
    )


@dataclass(frozen=True)
class Decision:
    """The outcome of a rule over answers: the answer decided (None: no decision), and how the votes split."""

    rule: str
    answer: Any
    split: tuple[tuple[str, float], ...]  # each answer as shown, with its votes (or points, or the mean)
    voters: int
    reason: str
    # The voters whose replies gave no valid answer (counted as abstentions), by name: said wherever the decision is.
    invalid: tuple[str, ...] = ()

    def line(self) -> str:
        votes = "; ".join(f"{a}: {_number(n)}" for a, n in self.split)
        head = f"Decision by {RULE_WORDS[self.rule]}"
        decided = "no decision" if self.answer is None else shown(self.answer)
        line = f"{head}: {decided} ({self.reason}). {votes}".strip()
        if self.invalid:
            *rest, last = self.invalid
            names = f"{', '.join(rest)} and {last}" if rest else last
            counted = "abstentions" if rest else "an abstention"
            line = f"{line}{'' if line.endswith('.') else '.'} {names} gave no valid answer, counted as {counted}."
        return line

    def as_data(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "answer": self.answer,
            "split": [[a, n] for a, n in self.split],
            "voters": self.voters,
            "reason": self.reason,
            "invalid": list(self.invalid),
        }


RULE_WORDS = {
    "plurality": "plurality vote",
    "majority": "majority vote",
    "unanimity": "unanimity",
    "approval": "approval vote",
    "borda": "Borda count",
    "mean": "mean",
    "judge": "the judge's answer",
}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def agreement(answers: Sequence[Any]) -> tuple[int, Any]:
    """How many of these answers agree with the most common one, and that answer (first given among ties)."""
    keys = [key(a) for a in answers if a is not None]
    if not keys:
        return 0, None
    counts = Counter(keys)
    best = max(counts.values())
    first = next(a for a in answers if a is not None and counts[key(a)] == best)
    return best, first


def agrees(answers: Sequence[Any], share: float) -> bool:
    """Whether at least `share` of the answers (abstentions count against) agree; 1.0 is all of them."""
    if not answers:
        return False
    count, _ = agreement(answers)
    return count >= math.ceil(share * len(answers) - 1e-9)


def decide(rule: str, votes: Sequence[Vote], choices: Sequence[str] = (), tie: str = "none") -> Decision:
    """Apply a decision rule to the votes (abstentions, answer None, count as voters who chose nothing); the
    decision names the voters whose replies were invalid."""
    invalid = tuple(v.name or v.seat for v in votes if v.invalid and v.answer is None)
    return dataclasses.replace(_decide(rule, votes, choices, tie), invalid=invalid)


def _decide(rule: str, votes: Sequence[Vote], choices: Sequence[str], tie: str) -> Decision:
    given_ = [v for v in votes if v.answer is not None]
    voters = len(votes)
    if rule == "mean":
        numbers = [float(v.answer) for v in given_]
        if not numbers:
            return Decision(rule, None, (), voters, "no answers")
        mean = sum(numbers) / len(numbers)
        mean = int(mean) if mean.is_integer() else round(mean, 6)
        return Decision(rule, mean, ((shown(mean), mean),), voters, f"the mean of {len(numbers)} answers")
    if rule == "judge":
        if not given_:
            return Decision(rule, None, (), voters, "the judge gave no answer")
        return Decision(rule, given_[0].answer, ((shown(given_[0].answer), 1),), voters, f"{given_[0].name}'s answer")
    tally: dict[Any, float] = {}
    first_seen: dict[Any, Any] = {}
    for vote in given_:
        if rule == "approval":
            items = [(choice, 1.0) for choice in vote.answer]
        elif rule == "borda":
            n = len(vote.answer)
            items = [(choice, float(n - 1 - place)) for place, choice in enumerate(vote.answer)]
        else:
            items = [(vote.answer, 1.0)]
        for value, points in items:
            k = key(value)
            first_seen.setdefault(k, value)
            tally[k] = tally.get(k, 0.0) + points
    if rule in ("approval", "borda"):
        for choice in choices:
            first_seen.setdefault(key(choice), choice)
            tally.setdefault(key(choice), 0.0)
    split = tuple(sorted(((shown(first_seen[k]), n) for k, n in tally.items()), key=lambda item: -item[1]))
    if not tally or not given_:
        return Decision(rule, None, split, voters, "no answers")
    best = max(tally.values())
    leaders = [k for k, n in tally.items() if n == best]
    if rule in ("majority", "unanimity"):
        need = voters if rule == "unanimity" else voters // 2 + 1
        if best >= need:
            words = "every vote" if rule == "unanimity" else f"{_number(best)} of {voters} votes, more than half"
            return Decision(rule, first_seen[leaders[0]], split, voters, words)
        words = "the votes are not unanimous" if rule == "unanimity" else f"no answer has more than half of {voters}"
        return Decision(rule, None, split, voters, words)
    unit = {"plurality": "votes", "approval": "approvals", "borda": "points"}[rule]
    if len(leaders) > 1:
        if tie == "first":
            # The tied answer given first (tally keeps the order answers were first given).
            return Decision(
                rule, first_seen[leaders[0]], split, voters, f"a tie at {_number(best)} {unit}, the first given"
            )
        return Decision(rule, None, split, voters, f"a tie at {_number(best)} {unit}")
    return Decision(rule, first_seen[leaders[0]], split, voters, f"{_number(best)} {unit} of {voters} voters")
