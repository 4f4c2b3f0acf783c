"""What the evidence protocols share: the question, the passage, the answers and the judge's answer steps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from debates.formats.base import PUBLIC, DebateConfig, Format, FormatError, Record, Step, StepBuilder
from debates.formats.evidence.answers import Answer, parse_answer, read_answer
from debates.formats.evidence.prompts import (
    ANSWER_AGAIN,
    LIMIT_RULE,
    MAX_ANSWER,
    MAX_PASSAGE,
    MAX_QUESTION,
    PASSAGE_BLOCK,
    QUESTION_BLOCK,
)
from debates.formats.quotes import verify


class EvidenceFormat(Format):
    """What the four protocols share: the options (passage, question, answers), validation, the judge's answer."""

    listed = False  # an experiment makes these; the new-debate form has no passage to give
    scores_turns = False
    verdict_label = "Answer"  # the letter the judge favours
    needs_passage: ClassVar[bool] = True
    judging = "in_debate"
    judge_seat = "judge"
    quotes_option = "passage"
    TEXT_OPTIONS: ClassVar[tuple[str, ...]] = ("passage", "question", "answers")

    def answer_ordinal(self, config: DebateConfig) -> int:
        raise NotImplementedError

    # -- the options -------------------------------------------------------------------------------------------------
    @staticmethod
    def question_block(config: DebateConfig) -> str:
        answers = config.options["answers"]
        return QUESTION_BLOCK.format(question=config.options["question"], answer_a=answers[0], answer_b=answers[1])

    @staticmethod
    def passage_block(config: DebateConfig) -> str:
        return PASSAGE_BLOCK.format(passage=config.options["passage"])

    def limit_rule(self, config: DebateConfig) -> str:
        limit = self.option(config, "word_limit") if any(o.name == "word_limit" for o in self.option_specs) else 0
        return "\n" + LIMIT_RULE.format(limit=limit) if limit else ""

    def word_limit(self, config: DebateConfig) -> int | None:
        return self.option(config, "word_limit") or None

    def validate(self, config: DebateConfig) -> None:
        options = config.options
        passage, question, answers = options.get("passage", ""), options.get("question"), options.get("answers")
        if not isinstance(passage, str) or len(passage) > MAX_PASSAGE:
            raise FormatError(f"The passage must be text of at most {MAX_PASSAGE} characters.")
        if self.needs_passage and not passage.strip():
            raise FormatError(f"{self.title} needs a passage.")
        if not isinstance(question, str) or not question.strip() or len(question) > MAX_QUESTION:
            raise FormatError(f"The question must be text of 1 to {MAX_QUESTION} characters.")
        if (
            not isinstance(answers, list)
            or len(answers) != 2
            or not all(isinstance(a, str) and a.strip() and len(a) <= MAX_ANSWER for a in answers)
        ):
            raise FormatError(f"There must be exactly two answers, each text of 1 to {MAX_ANSWER} characters.")
        if answers[0].strip() == answers[1].strip():
            raise FormatError("The two answers must differ.")
        numbers = {k: v for k, v in options.items() if k not in self.TEXT_OPTIONS}
        super().validate(replace(config, options=numbers))

    def header(self, config: DebateConfig) -> Step:
        step = super().header(config)
        extra = {key: config.options.get(key, "") for key in self.TEXT_OPTIONS}
        return replace(step, data={**step.data, **extra})

    # -- the judge's answer -------------------------------------------------------------------------------------------
    def answer_steps(self, build: StepBuilder, prompt: Callable[[], str], needs: Sequence[int], ordinal: int) -> None:
        """The judge's answer at `ordinal`; if it cannot be read, the same question once more at `ordinal + 1`.

        `prompt` is called only once the answer is ready to ask for: it reads the whole transcript."""
        if ordinal not in build.done and all(n in build.done for n in needs):
            build.call("judge", ordinal, "VERDICT", "answer", prompt(), needs=needs, visibility=PUBLIC)
        first = build.done.get(ordinal)
        if first is not None and parse_answer(first.content) is None:
            build.call(
                "judge", ordinal + 1, "VERDICT", "answer_again", ANSWER_AGAIN, needs=(ordinal,), visibility=PUBLIC
            )

    def answer(self, config: DebateConfig, records: Sequence[Record]) -> Answer | None:
        """The judge's recorded answer; None until it is in (both attempts, when the first was unreadable)."""
        done = {r.ordinal: r for r in records}
        ordinal = self.answer_ordinal(config)
        first, second = done.get(ordinal), done.get(ordinal + 1)
        return read_answer(first.content if first else None, second.content if second else None)

    def finished(self, config: DebateConfig, records: Sequence[Record]) -> bool:
        return self.answer(config, records) is not None

    def outcome(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, Any]:
        answer = self.answer(config, records)
        if answer is None:
            return {}
        if answer.probabilities is None:
            return {"winner": "", "announcement": "The judge's answer could not be read, twice: recorded as unparsed."}
        p = answer.probabilities
        return {"winner": answer.choice or "", "announcement": f"A: {p['A']:.2f}, B: {p['B']:.2f}"}

    def speeches(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, list[str]]:
        """Each speaker seat's public speeches in order (raw, as written)."""
        found: dict[str, list[str]] = {}
        for record in sorted(records, key=lambda r: r.ordinal):
            if record.kind == "TURN" and record.seat and record.seat != "judge":
                found.setdefault(record.seat, []).append(record.content)
        return found

    def quote_counts(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, dict[str, int]]:
        """Per speaker seat: quotes made, verified and unverified, over all its speeches."""
        passage = config.options.get("passage", "")
        totals: dict[str, dict[str, int]] = {}
        for seat, speeches in self.speeches(config, records).items():
            total = {"quotes": 0, "verified": 0, "unverified": 0}
            for speech in speeches:
                for key, count in verify(passage, speech).counts().items():
                    total[key] += count
            totals[seat] = total
        return totals
