"""`evidence_debate`: two debaters argue answers A and B from the passage; a judge who cannot read it decides."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from debates.formats.base import PUBLIC, DebateConfig, FormatError, Plan, Record, SeatSpec, Side, StepBuilder
from debates.formats.evidence.common import EvidenceFormat
from debates.formats.evidence.prompts import (
    ANSWER,
    DEBATER_BRIEF,
    DEBATER_OPPONENT,
    DEBATER_SPEAK,
    JUDGE_DEBATE,
    LETTERS,
    QUOTE_RULE_JUDGE,
    QUOTE_RULE_SPEAKER,
    ROUNDS,
    SIMULTANEOUS,
    WORD_LIMIT,
)
from debates.formats.quotes import verify


class EvidenceDebate(EvidenceFormat):
    name = "evidence_debate"
    title = "Evidence debate"
    replayed_by = "evidence_judge"
    description = (
        "Two debaters who have read a passage argue for answers A and B, citing it; a judge who has not "
        "read it gives the probability of each answer."
    )
    seat_specs = (
        SeatSpec("a", "debater", "Debater A", side="A"),
        SeatSpec("b", "debater", "Debater B", side="B"),
        SeatSpec("judge", "judge", "Judge"),
    )
    option_specs = (ROUNDS, WORD_LIMIT, SIMULTANEOUS)
    sides = (Side("A", "Answer A", ("a",)), Side("B", "Answer B", ("b",)))
    poll = "sides"
    side_answers_option = "answers"

    def statements(self, options: Mapping[str, Any]) -> int:
        return 2 * self.value(options, "rounds")

    def calls(self, options: Mapping[str, Any]) -> int:
        """Two debaters' notes and speeches, then the judge's answer (once more if it cannot be read)."""
        return 2 + self.statements(options) + 1

    @staticmethod
    def speech_ordinal(seat: str, round_: int) -> int:
        return 2 * round_ + (1 if seat == "a" else 2)

    def answer_ordinal(self, config: DebateConfig) -> int:
        return 2 * self.option(config, "rounds") + 3

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        build = StepBuilder(config, records)
        if 0 not in build.done:
            build.steps.append(self.header(config))
        rounds = self.option(config, "rounds")
        if not config.is_ending:
            for seat in ("a", "b"):
                self._debater_steps(config, build, seat, rounds)
        spoken = [o for o in range(3, 2 * rounds + 3) if o in build.done]
        # The judge waits for the last speech; while ending, for the last of those spoken (the engine lets
        # the speeches in flight land before it asks again).
        last = max(spoken, default=0) if config.is_ending else 2 * rounds + 2
        self.answer_steps(
            build,
            lambda: self.judge_prompt(config, build.done, rounds),
            (last,) if last else (),
            self.answer_ordinal(config),
        )
        return Plan(steps=tuple(build.steps), finished=self.finished(config, records))

    def _debater_steps(self, config: DebateConfig, build: StepBuilder, seat: str, rounds: int) -> None:
        """The seat's notes, then its speeches: each after its own previous step and the opponent's speech it answers.

        In turn, A's speech in round r answers B's of round r-1 and B's answers A's of round r; simultaneously,
        both answer the other's of round r-1. So each speech's prompt shows at most one new opposing speech."""
        letter, other = ("A", "B") if seat == "a" else ("B", "A")
        opponent = "b" if seat == "a" else "a"
        answers = config.options["answers"]
        mine = answers[LETTERS.index(letter)]
        notes = 1 if seat == "a" else 2
        brief = DEBATER_BRIEF.format(
            letter=letter,
            answer=mine,
            other=other,
            other_answer=answers[LETTERS.index(other)],
            passage_block=self.passage_block(config),
            question_block=self.question_block(config),
            quote_rule=QUOTE_RULE_SPEAKER,
            limit_rule=self.limit_rule(config),
        )
        build.call(seat, notes, "PLAN", "notes", brief)
        answers_same_round = seat == "b" and not self.option(config, "simultaneous")
        for round_ in range(1, rounds + 1):
            own_previous = self.speech_ordinal(seat, round_ - 1) if round_ > 1 else notes
            answered = round_ if answers_same_round else round_ - 1
            needs = [own_previous]
            prompt = ""
            if answered:
                needs.append(self.speech_ordinal(opponent, answered))
                heard = build.done.get(needs[-1])
                if heard is not None:
                    speech = verify(config.options["passage"], heard.content).marked
                    prompt = DEBATER_OPPONENT.format(other=other, round=answered, speech=speech)
            build.call(
                seat,
                self.speech_ordinal(seat, round_),
                "TURN",
                "speech",
                prompt + DEBATER_SPEAK.format(round=round_, rounds=rounds, letter=letter, answer=mine),
                needs=needs,
                visibility=PUBLIC,
                word_limit=self.word_limit(config),
                data={"round": round_, "answer": letter},
            )
            if self.speech_ordinal(seat, round_) not in build.done:
                return  # its later speeches wait for this one

    def spoken(self, config: DebateConfig, done: Mapping[int, Record]) -> list[Speech]:
        """The speeches made, in the order the judge reads them: by round, A before B."""
        return [
            Speech(round_, seat, record.content)
            for round_ in range(1, self.option(config, "rounds") + 1)
            for seat in ("a", "b")
            if (record := done.get(self.speech_ordinal(seat, round_))) is not None
        ]

    def judge_prompt(self, config: DebateConfig, done: Mapping[int, Record], rounds: int) -> str:
        return debate_judge_prompt(config, self.spoken(config, done))


@dataclass(frozen=True)
class Speech:
    round: int
    seat: str  # "a" or "b"
    text: str  # as written: quotes are marked when the judge reads it


def debate_judge_prompt(config: DebateConfig, speeches: Sequence[Speech]) -> str:
    """The debate judge's one prompt: the question, the quote rule, each speech with its quotes marked."""
    passage = config.options["passage"]
    parts = [
        f"Round {s.round}, debater {LETTERS[('a', 'b').index(s.seat)]}:\n{verify(passage, s.text).marked}"
        for s in speeches
    ]
    transcript = "\n\n".join(parts) if parts else "(No speeches were made.)"
    return (
        JUDGE_DEBATE.format(
            question_block=EvidenceFormat.question_block(config), quote_rule=QUOTE_RULE_JUDGE, transcript=transcript
        )
        + ANSWER
    )


def judge_replay_options(config: DebateConfig, records: Sequence[Record], source_debate: int | None = None) -> dict:
    """The options of an `evidence_judge` replay of the evidence debate `config` (finished, or ended early):
    its question, answers, passage and rounds, and the speeches made, copied in so the replay stays pure."""
    if config.format != EvidenceDebate.name:
        raise FormatError(f"Only an evidence debate can be judged again, not a {config.format!r} debate.")
    debate = EvidenceDebate()
    done = {r.ordinal: r for r in records if r.kind == "TURN"}
    return {
        **{key: config.options[key] for key in EvidenceFormat.TEXT_OPTIONS},
        **{o.name: debate.option(config, o.name) for o in debate.option_specs},
        "speeches": [{"round": s.round, "seat": s.seat, "text": s.text} for s in debate.spoken(config, done)],
        "source_debate": source_debate,
    }
