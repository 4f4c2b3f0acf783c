"""The problem-solving panel (protocol: docs/protocols/panel.md): Analyzer, Solver, Moderator in rounds.

Each round is three turns, always in that order. Turn numbers are `(round - 1) * 3 + position`
and serve as ordinals (0 is the header). When the Analyzer starts a new round it sees only
complete rounds (`filter_complete_rounds`); the Solver and Moderator also see the round in progress.

The panel ends after `max_rounds`, or earlier when the Moderator declares the problem resolved.
The signal is a status line: the Moderator is asked to end every message with a last line that
is exactly `STATUS: RESOLVED` or `STATUS: CONTINUE`. Only the last non-empty line counts (so the
word "resolved" in its prose never ends a panel), case and surrounding Markdown emphasis or
punctuation are ignored, and anything else means continue.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from debates.formats.base import (
    PUBLIC,
    WORD_LIMIT,
    DebateConfig,
    Format,
    FormatError,
    OptionSpec,
    Plan,
    Record,
    SeatSpec,
    Step,
    single_turn,
)

Persona = Literal["Analyzer AI", "Solver AI", "Moderator AI"]
POSITIONS: dict[str, int] = {"Analyzer AI": 1, "Solver AI": 2, "Moderator AI": 3}
SEAT_OF_POSITION = {1: "analyzer", 2: "solver", 3: "moderator"}


@dataclass(frozen=True)
class DiscussionRound:
    round_number: int
    analyzer: str | None = None
    solver: str | None = None
    moderator: str | None = None

    def responses(self) -> tuple[str | None, str | None, str | None]:
        return (self.analyzer, self.solver, self.moderator)


def _has_content(text: str | None) -> bool:
    return bool(text and text.strip())


def is_round_complete(round_: DiscussionRound) -> bool:
    """All three personas responded with content."""
    return all(_has_content(r) for r in round_.responses())


def is_round_empty(round_: DiscussionRound) -> bool:
    """No persona responded with content."""
    return not any(_has_content(r) for r in round_.responses())


def is_round_incomplete(round_: DiscussionRound) -> bool:
    """Some, but not all, personas responded."""
    return not is_round_complete(round_) and not is_round_empty(round_)


def filter_complete_rounds(rounds: Sequence[DiscussionRound]) -> list[DiscussionRound]:
    """Complete and empty rounds; incomplete ones are left out, so the Analyzer never sees a half round."""
    return [r for r in rounds if not is_round_incomplete(r)]


def sort_rounds_by_round_number(rounds: Sequence[DiscussionRound]) -> list[DiscussionRound]:
    return sorted(rounds, key=lambda r: r.round_number)


def validate_rounds_sorted(rounds: Sequence[DiscussionRound]) -> bool:
    return all(a.round_number <= b.round_number for a, b in itertools.pairwise(rounds))


def validate_round_number_sequence(rounds: Sequence[DiscussionRound]) -> tuple[bool, list[str]]:
    """No gaps, no duplicates, starts at 1, positive whole numbers. Returns (is_valid, errors)."""
    errors: list[str] = []
    numbers = [r.round_number for r in rounds]
    for n in numbers:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            errors.append(f"Round number {n!r} is not a positive integer")
    valid = sorted(n for n in numbers if isinstance(n, int) and not isinstance(n, bool) and n >= 1)
    duplicates = sorted({n for n in valid if valid.count(n) > 1})
    for n in duplicates:
        errors.append(f"Duplicate round number {n}")
    if valid and valid[0] != 1:
        errors.append(f"Round numbers must start at 1, not {valid[0]}")
    unique = sorted(set(valid))
    for a, b in itertools.pairwise(unique):
        if b != a + 1:
            errors.append(f"Gap in round numbers between {a} and {b}")
    return (not errors, errors)


def validate_new_round_number(rounds: Sequence[DiscussionRound], new_round_number: int) -> tuple[bool, str | None]:
    """A new round must be numbered len(rounds) + 1."""
    expected = len(rounds) + 1
    if new_round_number != expected:
        return (False, f"Expected round number {expected}, got {new_round_number}")
    return (True, None)


def calculate_turn_number(round_number: int, persona: Persona) -> int:
    """(round - 1) * 3 + position, with Analyzer 1, Solver 2, Moderator 3."""
    if round_number < 1:
        raise ValueError(f"Round number must be at least 1, not {round_number}")
    return (round_number - 1) * 3 + POSITIONS[persona]


_STATUS = re.compile(r"^[\s*_`>#-]*status\s*:\s*(resolved|continue)[\s*_`.!]*$", re.IGNORECASE)


def moderator_status(text: str) -> Literal["resolved", "continue"]:
    """The Moderator's decision: its last non-empty line, `STATUS: RESOLVED`, means resolved."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines:
        match = _STATUS.match(lines[-1])
        if match and match.group(1).lower() == "resolved":
            return "resolved"
    return "continue"


ANALYZER_PROMPT = """Problem: {problem}

{context}Round {round}. As the Analyzer, break the problem down: what is known, what is assumed,
and which open questions matter most now? List the open questions in order of importance."""

SOLVER_PROMPT = """Problem: {problem}

{context}Round {round}. As the Solver, answer the Analyzer's most important open question with a
concrete proposal, and say how we would know whether it works."""

MODERATOR_PROMPT = """Problem: {problem}

{context}Round {round} of at most {max_rounds}. As the Moderator, weigh the analysis and the proposal:
say what is now settled and what remains open.
End your message with a last line that is exactly `STATUS: RESOLVED` if the problem is solved,
or `STATUS: CONTINUE` if the panel needs another round."""


def rounds_from_records(records: Sequence[Record]) -> list[DiscussionRound]:
    by_round: dict[int, dict[str, str]] = {}
    for record in records:
        if record.kind == "TURN" and record.ordinal >= 1:
            number = (record.ordinal - 1) // 3 + 1
            by_round.setdefault(number, {})[record.seat or ""] = record.content
    return sort_rounds_by_round_number(
        [DiscussionRound(n, r.get("analyzer"), r.get("solver"), r.get("moderator")) for n, r in by_round.items()]
    )


def _render(rounds: Sequence[DiscussionRound], names: dict[str, str]) -> str:
    parts = []
    for round_ in rounds:
        if is_round_empty(round_):
            continue
        lines = [f"Round {round_.round_number}:"]
        for key, text in zip(("analyzer", "solver", "moderator"), round_.responses(), strict=True):
            if _has_content(text):
                lines.append(f"{names[key]}: {text}")
        parts.append("\n".join(lines))
    return "The panel so far:\n\n" + "\n\n".join(parts) + "\n\n" if parts else ""


class Panel(Format):
    name = "panel"
    title = "Problem-solving panel"
    description = (
        "An Analyzer, a Solver and a Moderator work on a problem in rounds of three until the Moderator "
        "declares it resolved or the rounds run out."
    )
    seat_specs = (
        SeatSpec("analyzer", "analyzer", "Analyzer"),
        SeatSpec("solver", "solver", "Solver"),
        SeatSpec("moderator", "moderator", "Moderator"),
    )
    option_specs = (OptionSpec("max_rounds", "Rounds at most", 5, 1, 30), WORD_LIMIT)
    poll = "people"

    def statements(self, options: Mapping[str, Any]) -> int:
        """At most the Analyzer's and the Solver's turns of every round (the Moderator may end it sooner)."""
        return 2 * self.value(options, "max_rounds")

    def calls(self, options: Mapping[str, Any]) -> int:
        """At most three turns a round."""
        return 3 * self.value(options, "max_rounds")

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        done = {r.ordinal: r for r in records}
        if 0 not in done:
            return Plan(steps=(self.header(config),))
        rounds = rounds_from_records(records)
        valid, errors = validate_round_number_sequence(rounds)
        if not valid:
            raise FormatError("The panel's rounds are out of order: " + "; ".join(errors))
        last_turn = max((o for o in done if o >= 1), default=0)
        max_rounds = self.option(config, "max_rounds")
        if last_turn % 3 == 0 and last_turn:
            finished_round = last_turn // 3
            if moderator_status(done[last_turn].content) == "resolved" or finished_round >= max_rounds:
                return Plan(finished=True)
        if config.is_ending and last_turn % 3 == 0:
            return Plan(finished=True)
        turn = last_turn + 1
        round_number = (turn - 1) // 3 + 1
        position = (turn - 1) % 3 + 1
        seat_key = SEAT_OF_POSITION[position]
        seat = config.seat(seat_key)
        assert seat is not None
        if position == 1:
            ok, error = validate_new_round_number(rounds, round_number)
            if not ok:
                raise FormatError(f"The panel cannot start round {round_number}: {error}")
        names = {s.key: s.name for s in config.seats}
        complete = filter_complete_rounds([r for r in rounds if r.round_number < round_number])
        current = [r for r in rounds if r.round_number == round_number]
        visible = complete if position == 1 else complete + current
        template = {1: ANALYZER_PROMPT, 2: SOLVER_PROMPT, 3: MODERATOR_PROMPT}[position]
        prompt = template.format(
            problem=config.topic, context=_render(visible, names), round=round_number, max_rounds=max_rounds
        )
        step = Step(
            ordinal=turn,
            kind="TURN",
            step=seat_key,
            seat=seat_key,
            prompt=prompt,
            messages=single_turn(seat, prompt),
            visibility=PUBLIC,
            word_limit=config.options.get("word_limit") or None,
            data={"round": round_number, "turn": turn},
        )
        return Plan(steps=(step,))
