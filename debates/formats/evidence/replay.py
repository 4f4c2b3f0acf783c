"""`evidence_judge`: another judge of a panel reads a finished evidence debate's speeches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from debates.formats.base import DebateConfig, FormatError, Plan, Record, SeatSpec, StepBuilder
from debates.formats.evidence.common import EvidenceFormat
from debates.formats.evidence.debate import Speech, debate_judge_prompt, judge_replay_options
from debates.formats.evidence.prompts import MAX_SPEECH, ROUNDS, SIMULTANEOUS, WORD_LIMIT


class EvidenceJudge(EvidenceFormat):
    """Another judge of a panel reads a finished evidence debate: the same one prompt its own judge read.

    The speeches are in the options (judge_replay_options), so the format never reads another debate and a
    replay by the debate judge's persona sends exactly the messages that judge received. The passage is in
    the options only to mark the quotes, as in the debate: no prompt here carries it."""

    name = "evidence_judge"
    title = "Evidence judge replay"
    description = "A judge who has not read the passage judges a finished evidence debate's speeches."
    seat_specs = (SeatSpec("judge", "judge", "Judge"),)
    replays_a_debate = True
    header_template = "partials/evidence_replay.html"

    def replay_options(
        self, config: DebateConfig, records: Sequence[Record], source_debate: int | None = None
    ) -> dict[str, Any]:
        return judge_replay_options(config, records, source_debate)

    option_specs = (ROUNDS, WORD_LIMIT, SIMULTANEOUS)

    def statements(self, options: Mapping[str, Any]) -> int:
        """The judged debate's speeches, as it read them."""
        return 2 * self.value(options, "rounds")

    def calls(self, options: Mapping[str, Any]) -> int:
        """The judge's answer (once more if it cannot be read)."""
        return 1

    TEXT_OPTIONS = ("passage", "question", "answers", "speeches", "source_debate")

    def answer_ordinal(self, config: DebateConfig) -> int:
        return 1

    def speeches_judged(self, config: DebateConfig) -> list[Speech]:
        return [Speech(s["round"], s["seat"], s["text"]) for s in config.options["speeches"]]

    def validate(self, config: DebateConfig) -> None:
        super().validate(config)
        speeches, rounds = config.options.get("speeches"), self.option(config, "rounds")
        if not isinstance(speeches, list) or len(speeches) > 2 * rounds:
            raise FormatError(
                f"The speeches must be a list of at most {2 * rounds}: build them with judge_replay_options()."
            )
        for s in speeches:
            if (
                not isinstance(s, dict)
                or s.get("seat") not in ("a", "b")
                or not isinstance(s.get("round"), int)
                or not 1 <= s["round"] <= rounds
                or not isinstance(s.get("text"), str)
                or len(s["text"]) > MAX_SPEECH
            ):
                raise FormatError("Each speech needs a round, a seat (a or b) and its text.")
        source = config.options.get("source_debate")
        if source is not None and (isinstance(source, bool) or not isinstance(source, int)):
            raise FormatError("The source debate must be a debate's id.")

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        build = StepBuilder(config, records)
        if 0 not in build.done:
            build.steps.append(self.header(config))
        self.answer_steps(build, lambda: debate_judge_prompt(config, self.speeches_judged(config)), (), 1)
        return Plan(steps=tuple(build.steps), finished=self.finished(config, records))
