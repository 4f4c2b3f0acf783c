"""`blind` and `oracle`: the judge alone, without the passage (a floor) or reading it (a ceiling)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from debates.formats.base import DebateConfig, Plan, Record, SeatSpec, StepBuilder
from debates.formats.evidence.common import EvidenceFormat
from debates.formats.evidence.prompts import ANSWER, JUDGE_BLIND, JUDGE_ORACLE


class Blind(EvidenceFormat):
    name = "blind"
    title = "Blind judge"
    description = "A judge answers from the question and the two answers alone: the baseline with no debate."
    seat_specs = (SeatSpec("judge", "judge", "Judge"),)

    def calls(self, options: Mapping[str, Any]) -> int:
        """The judge's answer (once more if it cannot be read)."""
        return 1

    needs_passage = False

    def answer_ordinal(self, config: DebateConfig) -> int:
        return 1

    def judge_prompt(self, config: DebateConfig) -> str:
        return JUDGE_BLIND.format(question_block=self.question_block(config)) + ANSWER

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        build = StepBuilder(config, records)
        if 0 not in build.done:
            build.steps.append(self.header(config))
        self.answer_steps(build, lambda: self.judge_prompt(config), (), 1)
        return Plan(steps=tuple(build.steps), finished=self.finished(config, records))


class Oracle(Blind):
    name = "oracle"
    title = "Oracle judge"
    description = "A judge reads the passage and answers: the ceiling a judge reaches with the evidence itself."
    needs_passage = True

    def judge_prompt(self, config: DebateConfig) -> str:
        return (
            JUDGE_ORACLE.format(passage_block=self.passage_block(config), question_block=self.question_block(config))
            + ANSWER
        )
