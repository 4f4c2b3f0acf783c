"""`consultancy`: one consultant argues an answer and the judge questions it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from debates.formats.base import PUBLIC, DebateConfig, Plan, Record, SeatSpec, StepBuilder
from debates.formats.evidence.answers import asks_nothing
from debates.formats.evidence.common import EvidenceFormat
from debates.formats.evidence.prompts import (
    ANSWER,
    CONSULTANT_ANSWER,
    CONSULTANT_BRIEF,
    CONSULTANT_FIRST,
    CONSULTANT_NEXT,
    CONSULTANT_UNASKED,
    JUDGE_ASK,
    JUDGE_CONSULTANCY,
    JUDGE_HEARS,
    LETTERS,
    QUOTE_RULE_JUDGE,
    QUOTE_RULE_SPEAKER,
    ROUNDS,
    WORD_LIMIT,
)
from debates.formats.quotes import verify


class Consultancy(EvidenceFormat):
    name = "consultancy"
    title = "Consultancy"
    description = (
        "One consultant who has read a passage argues for one answer; the judge, who has not, asks it a "
        "question after each speech, then gives the probability of each answer."
    )
    seat_specs = (SeatSpec("consultant", "consultant", "Consultant"), SeatSpec("judge", "judge", "Judge"))
    option_specs = (ROUNDS, WORD_LIMIT, CONSULTANT_ANSWER)
    assigned_answer_option = CONSULTANT_ANSWER.name

    def statements(self, options: Mapping[str, Any]) -> int:
        """The consultant's speeches."""
        return self.value(options, "rounds")

    def calls(self, options: Mapping[str, Any]) -> int:
        """The consultant's notes and speeches, the judge's question after each speech but the last, its answer."""
        rounds = self.statements(options)
        return 1 + rounds + (rounds - 1) + 1

    def answer_ordinal(self, config: DebateConfig) -> int:
        return 2 * self.option(config, "rounds") + 1

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        build = StepBuilder(config, records)
        if 0 not in build.done:
            build.steps.append(self.header(config))
        rounds = self.option(config, "rounds")
        assigned = self.option(config, "consultant_answer")
        letter, answer = LETTERS[assigned], config.options["answers"][assigned]
        passage = config.options["passage"]
        brief = CONSULTANT_BRIEF.format(
            letter=letter,
            answer=answer,
            passage_block=self.passage_block(config),
            question_block=self.question_block(config),
            quote_rule=QUOTE_RULE_SPEAKER,
            limit_rule=self.limit_rule(config),
        )
        judge_brief = JUDGE_CONSULTANCY.format(
            letter=letter, question_block=self.question_block(config), quote_rule=QUOTE_RULE_JUDGE
        )
        build.call("consultant", 1, "PLAN", "notes", brief)
        spoken = heard = 0  # the rounds the consultant has spoken, and the judge has asked a question after

        def hears(round_: int) -> str:
            speech = verify(passage, build.done[2 * round_].content).marked
            return JUDGE_HEARS.format(round=round_, rounds=rounds, speech=speech)

        for round_ in range(1, rounds + 1):
            speech_at = 2 * round_
            if not config.is_ending:
                if round_ == 1:
                    prompt = CONSULTANT_FIRST.format(rounds=rounds, letter=letter, answer=answer)
                else:
                    asked = build.done.get(speech_at - 1)
                    if asked is not None and asks_nothing(asked.content):
                        prompt = CONSULTANT_UNASKED.format(round=round_, rounds=rounds, letter=letter, answer=answer)
                    else:
                        prompt = CONSULTANT_NEXT.format(
                            question=asked.content if asked else "",
                            round=round_,
                            rounds=rounds,
                            letter=letter,
                            answer=answer,
                        )
                build.call(
                    "consultant",
                    speech_at,
                    "TURN",
                    "speech",
                    prompt,
                    needs=(speech_at - 1,),
                    visibility=PUBLIC,
                    word_limit=self.word_limit(config),
                    data={"round": round_, "answer": letter},
                )
            if speech_at not in build.done:
                break
            spoken = round_
            if round_ < rounds and not config.is_ending:
                lead = judge_brief if round_ == 1 else ""
                build.call(
                    "judge",
                    speech_at + 1,
                    "TURN",
                    "question",
                    lead + hears(round_) + JUDGE_ASK,
                    needs=(speech_at,),
                    visibility=PUBLIC,
                )
            if speech_at + 1 in build.done:
                heard = round_
        if spoken == rounds or config.is_ending:
            # The judge's first step reads the brief; then the speech it has not yet heard, if any.
            self.answer_steps(
                build,
                lambda: (judge_brief if heard == 0 else "") + (hears(spoken) if spoken > heard else "") + ANSWER,
                (2 * spoken,) if spoken else (),
                self.answer_ordinal(config),
            )
        return Plan(steps=tuple(build.steps), finished=self.finished(config, records))
