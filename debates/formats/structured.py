"""The structured debate (protocol: docs/protocols/structured.md): affirmative and negative, no moderator.

States run INITIALIZED -> PREPARATION -> OPENING_STATEMENTS -> REBUTTALS -> CROSS_EXAMINATION ->
CLOSING_STATEMENTS -> COMPLETED, and only those transitions are allowed. Each call sees only the
context the spec's table gives its round, written into its prompt:

| round             | previous statements included          |
|-------------------|----------------------------------------|
| preparation       | none                                   |
| opening           | none (only its own preparation)        |
| rebuttal          | the opponent's opening statement       |
| cross-examination | the opponent's opening and rebuttal    |
| closing           | all previous statements from both sides |

Preparation, rebuttals and closings: the two sides' steps do not read each other, so they run at
the same time (the spec calls both preparations concurrently). Openings run one after the other, as
the protocol says: the affirmative's first, then the negative's, which still sees only its own
preparation. Cross-examination is one call at a time, one question each way by default
(`questions` asks more): 12 calls in all. The affirmative's step always has the lower ordinal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from debates.formats.base import (
    PRIVATE,
    PUBLIC,
    WORD_LIMIT,
    DebateConfig,
    Format,
    FormatError,
    OptionSpec,
    Plan,
    Record,
    SeatInfo,
    SeatSpec,
    Side,
    Step,
    single_turn,
)


class DebateState(StrEnum):
    INITIALIZED = "INITIALIZED"
    PREPARATION = "PREPARATION"
    OPENING_STATEMENTS = "OPENING_STATEMENTS"
    REBUTTALS = "REBUTTALS"
    CROSS_EXAMINATION = "CROSS_EXAMINATION"
    CLOSING_STATEMENTS = "CLOSING_STATEMENTS"
    COMPLETED = "COMPLETED"
    ERROR = "ERROR"


VALID_TRANSITIONS: dict[DebateState, tuple[DebateState, ...]] = {
    DebateState.INITIALIZED: (DebateState.PREPARATION,),
    DebateState.PREPARATION: (DebateState.OPENING_STATEMENTS,),
    DebateState.OPENING_STATEMENTS: (DebateState.REBUTTALS,),
    DebateState.REBUTTALS: (DebateState.CROSS_EXAMINATION,),
    DebateState.CROSS_EXAMINATION: (DebateState.CLOSING_STATEMENTS,),
    DebateState.CLOSING_STATEMENTS: (DebateState.COMPLETED,),
    DebateState.COMPLETED: (),
    DebateState.ERROR: (),
}


class InvalidTransition(FormatError):
    pass


def transition(current: DebateState, target: DebateState) -> DebateState:
    """The state after moving from `current` to `target`; raise InvalidTransition if that move is not allowed."""
    if target not in VALID_TRANSITIONS[current]:
        allowed = ", ".join(VALID_TRANSITIONS[current]) or "none"
        raise InvalidTransition(f"Invalid state transition from {current} to {target} (allowed: {allowed})")
    return target


PREPARATION = """The debate topic is: {topic}

You will argue the {side} side. Prepare privately before the debate: list your strongest
arguments with the evidence or reasoning behind each, the arguments you expect from the
{other} side, and how you will answer them. These notes are for you alone."""

OPENING = """The debate topic is: {topic}

You argue the {side} side. Here are your preparation notes:

{preparation}

Deliver your opening statement: state your position clearly and present your main arguments."""

REBUTTAL = """The debate topic is: {topic}

You argue the {side} side. Your opponent, {opponent}, gave this opening statement:

"{opponent_opening}"

Deliver your rebuttal: answer their strongest points directly and show where their case fails."""

QUESTION = """The debate topic is: {topic}

You argue the {side} side. Cross-examination: you may now ask {opponent} a question.
Their opening statement was:

"{opponent_opening}"

Their rebuttal was:

"{opponent_rebuttal}"
{earlier}
Ask one pointed question that exposes a weakness in their case. Give only the question."""

ANSWER = """The debate topic is: {topic}

You argue the {side} side. Cross-examination: {opponent} asks you:

"{question}"

Their opening statement was:

"{opponent_opening}"

Their rebuttal was:

"{opponent_rebuttal}"

Answer the question directly and honestly, then turn it to your advantage if you can."""

CLOSING = """The debate topic is: {topic}

You argue the {side} side. Here is the whole debate so far:

{transcript}

Deliver your closing statement: summarise your case, answer the most damaging point made
against it, and say why your side should prevail."""


def _other(key: str) -> str:
    return "negative" if key == "affirmative" else "affirmative"


class Structured(Format):
    name = "structured"
    title = "Structured"
    replayed_by = "sides_judge"
    description = (
        "Affirmative and negative prepare, open, rebut, cross-examine each other and close, in a strict order; "
        "each round sees only what the protocol allows."
    )
    seat_specs = (
        SeatSpec("affirmative", "debater", "Affirmative", side="affirmative"),
        SeatSpec("negative", "debater", "Negative", side="negative"),
    )
    option_specs = (
        OptionSpec("questions", "Cross-examination questions per side", 1, 1, 5),
        WORD_LIMIT,
    )
    sides = (
        Side("affirmative", "Affirmative", ("affirmative",), "for"),
        Side("negative", "Negative", ("negative",), "against"),
    )
    judging = "replay"
    poll = "sides"

    def statements(self, options: Mapping[str, Any]) -> int:
        """Two openings, two rebuttals, a question and an answer each way per question, two closings."""
        return 6 + 4 * self.value(options, "questions")

    def calls(self, options: Mapping[str, Any]) -> int:
        """The statements and the two private preparations."""
        return self.statements(options) + 2

    def step_title(self, step: str) -> str:
        kind, _, number = step.rpartition("_")
        if kind in ("question", "answer") and number.isdigit():
            return f"Cross-examination {kind} {number}"
        return super().step_title(step)

    doing_words = {
        "preparation": "preparing",
        "opening": "giving the opening statement",
        "rebuttal": "giving a rebuttal",
        "closing": "giving the closing statement",
    }

    def doing(self, step: Step, options: Mapping[str, Any]) -> str:
        kind, _, number = step.step.rpartition("_")
        if kind in ("question", "answer") and number.isdigit():
            return f"{'asking' if kind == 'question' else 'answering'} question {number}"
        return super().doing(step, options)

    # Ordinals: 0 header; 1-2 preparation; 3-4 openings; 5-6 rebuttals; cross-examination from 7
    # (affirmative's questions each followed by the negative's answer, then the reverse); closings last.
    def cross_ordinals(self, config: DebateConfig) -> list[tuple[int, str, str, int]]:
        """(ordinal, asker or answerer key, "question" or "answer", question number) in protocol order."""
        rows = []
        ordinal = 7
        for asker in ("affirmative", "negative"):
            for number in range(1, self.option(config, "questions") + 1):
                rows.append((ordinal, asker, "question", number))
                rows.append((ordinal + 1, _other(asker), "answer", number))
                ordinal += 2
        return rows

    def closing_ordinals(self, config: DebateConfig) -> tuple[int, int]:
        first = 7 + 4 * self.option(config, "questions")
        return first, first + 1

    def state(self, config: DebateConfig, done: dict[int, Record]) -> DebateState:
        """The state the transcript has reached: the last round both sides completed."""
        rounds = [
            (DebateState.PREPARATION, (1, 2)),
            (DebateState.OPENING_STATEMENTS, (3, 4)),
            (DebateState.REBUTTALS, (5, 6)),
            (DebateState.CROSS_EXAMINATION, tuple(o for o, *_ in self.cross_ordinals(config))),
            (DebateState.CLOSING_STATEMENTS, self.closing_ordinals(config)),
        ]
        state = DebateState.INITIALIZED
        for target, ordinals in rounds:
            if not all(o in done for o in ordinals):
                break
            state = transition(state, target)
        return state

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        done = {r.ordinal: r for r in records}
        if 0 not in done:
            return Plan(steps=(self.header(config),))
        state = self.state(config, done)
        if state == DebateState.CLOSING_STATEMENTS:
            transition(state, DebateState.COMPLETED)
            return Plan(finished=True)
        if config.is_ending:
            # End Debate: both sides close at once on what has been said. Before any opening there is
            # nothing to close on, and a closing already given means the debate has ended.
            first, second = self.closing_ordinals(config)
            if not (3 in done and 4 in done) or first in done or second in done:
                return Plan(finished=True)
            return Plan(steps=tuple(self._round(config, done, DebateState.CLOSING_STATEMENTS)))
        target = VALID_TRANSITIONS[state][0]
        steps = [s for s in self._round(config, done, target) if s.ordinal not in done]
        return Plan(steps=tuple(steps))

    def _round(self, config: DebateConfig, done: dict[int, Record], target: DebateState) -> list[Step]:
        aff, neg = config.seat("affirmative"), config.seat("negative")
        assert aff is not None and neg is not None
        topic = config.topic
        limit = config.options.get("word_limit") or None

        def fill(seat: SeatInfo, template: str, **values: str) -> str:
            other = neg if seat.key == "affirmative" else aff
            return template.format(topic=topic, side=seat.side, other=other.side, opponent=other.name, **values)

        def step(ordinal: int, seat: SeatInfo, kind: str, name: str, prompt: str, public: bool = True) -> Step:
            return Step(
                ordinal=ordinal,
                kind=kind,
                step=name,
                seat=seat.key,
                prompt=prompt,
                messages=single_turn(seat, prompt),
                visibility=PUBLIC if public else PRIVATE,
                word_limit=limit,
                data={"state": str(target)},
            )

        seats = (aff, neg)
        if target == DebateState.PREPARATION:
            return [
                step(1 + i, s, "PLAN", "preparation", fill(s, PREPARATION), public=False) for i, s in enumerate(seats)
            ]
        if target == DebateState.OPENING_STATEMENTS:
            # One at a time: the negative's opening is asked for once the affirmative's is given.
            waiting = [i for i in range(2) if 3 + i not in done][:1]
            return [
                step(3 + i, seats[i], "TURN", "opening", fill(seats[i], OPENING, preparation=done[1 + i].content))
                for i in waiting
            ]
        if target == DebateState.REBUTTALS:
            return [
                step(5 + i, s, "TURN", "rebuttal", fill(s, REBUTTAL, opponent_opening=done[4 - i].content))
                for i, s in enumerate(seats)
            ]
        if target == DebateState.CROSS_EXAMINATION:
            return self._cross_examination(config, done, fill, step)
        first, second = self.closing_ordinals(config)
        transcript = self._transcript(config, done)
        return [
            step(first, aff, "TURN", "closing", fill(aff, CLOSING, transcript=transcript)),
            step(second, neg, "TURN", "closing", fill(neg, CLOSING, transcript=transcript)),
        ]

    def _cross_examination(
        self,
        config: DebateConfig,
        done: dict[int, Record],
        fill: Callable[..., str],
        step: Callable[..., Step],
    ) -> list[Step]:
        openings = {"affirmative": done[3].content, "negative": done[4].content}
        rebuttals = {"affirmative": done[5].content, "negative": done[6].content}
        # Strictly one at a time: each question and answer reads the one before it.
        for ordinal, key, kind, number in self.cross_ordinals(config):
            if ordinal in done:
                continue
            seat = config.seat(key)
            assert seat is not None
            opponent = _other(key)
            if kind == "question":
                earlier = [
                    f'\nEarlier you asked: "{done[o].content}"\nThey answered: "{done[o + 1].content}"\n'
                    for o, k, q, _ in self.cross_ordinals(config)
                    if k == key and q == "question" and o < ordinal
                ]
                prompt = fill(
                    seat,
                    QUESTION,
                    opponent_opening=openings[opponent],
                    opponent_rebuttal=rebuttals[opponent],
                    earlier="".join(earlier),
                )
                return [step(ordinal, seat, "TURN", f"question_{number}", prompt)]
            prompt = fill(
                seat,
                ANSWER,
                question=done[ordinal - 1].content,
                opponent_opening=openings[opponent],
                opponent_rebuttal=rebuttals[opponent],
            )
            return [step(ordinal, seat, "TURN", f"answer_{number}", prompt)]
        return []

    def _transcript(self, config: DebateConfig, done: dict[int, Record]) -> str:
        names = {s.key: s.name for s in config.seats}
        lines = []
        for ordinal in sorted(done):
            record = done[ordinal]
            if record.kind == "TURN":
                label = record.step.replace("_", " ")
                lines.append(f"{names[record.seat or '']} ({record.seat}, {label}): {record.content}")
        return "\n\n".join(lines)
