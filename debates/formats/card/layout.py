"""A card laid out at given option values: every slot (a call or a system line) in protocol order, with what each
reads, sees and is judged by. `Builder(spec, options).layout()` makes the `Layout` a `CardFormat` runs and plans."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from debates.formats.card import decide
from debates.formats.card.decide import AnswerSpec
from debates.formats.card.placeholders import REFERENCE_PREFIXES
from debates.formats.card.spec import (
    Call,
    CardSpec,
    Count,
    CrossStage,
    PrivateStage,
    RepeatStage,
    SpeechStage,
    SpeechVariant,
    Stage,
    SystemStage,
    UntilSpec,
    WhenSpec,
    default_label,
)
from debates.formats.card.template import EMPTY, Template

# -- the layout of a card at given options ---------------------------------------------------------------------
# A condition on earlier answers: the slots of the latest giving of a speech with choices (several where seats
# gave it at once; none where it is never laid out), the answers it runs on, and whether those are the answers it
# does not run on. It holds when any of those slots answered one of the answers (with the flag: none did).
Condition = tuple[tuple[int, ...], tuple[str, ...], bool]


@dataclass(frozen=True)
class Slot:
    index: int
    kind: str  # SYSTEM, PLAN, THINK, TURN, SCORE, INTERNAL, VERDICT
    step: str
    ref: str  # the step name placeholders read it by (a cross-examination's question_2 is read as question)
    label: str
    seat: str | None
    template: Template
    sees: str
    phase: str  # "main", "end" (when the owner ends early), "verdict"
    line: int
    field: str
    round: int = 0
    rounds: int = 0
    word_limit: int | None = None
    status: Template = EMPTY
    instruction: int | None = None  # a speech's system line
    prompt_is_instruction: bool = False  # the speech's prompt is its system line, already in its transcript
    about: int | None = None  # a judge's scoring step: the speech it judges
    turn: int = 0  # a speech's number among the speeches; a scoring step's: that of the speech it judges
    first_score: bool = False
    before_speech: bool = False  # a think before speaking: it waits for the speech before its own
    verdict: str = ""  # "deliberate", "confirm", "decide" or "announce"
    barrier: bool = False  # waits for every earlier slot (the first of the closing lines, of the verdict)
    question: int | None = None  # an answer: its question
    pair: tuple[str, str] | None = None  # a question or answer: the examination's asker and answerer
    earlier: tuple[tuple[int, int], ...] = ()  # a question: the exchanges of its examination before it
    shown: str = ""
    # Chains back to earlier slots, for finding what a slot reads when some slots do not run.
    prev_own: int | None = None
    prev_public: int | None = None
    prev_ref: int | None = None  # the previous slot with the same `ref`
    prev_turn: int | None = None
    refs: tuple[tuple[str, int | None], ...] = ()  # placeholder -> the latest earlier slot with that step
    # Speeches given at once: the group's first slot. Its speakers read nothing said from there on but their own.
    snapshot: int | None = None
    answer: AnswerSpec | None = None  # the answer a speech gives
    repeat: int = 0  # inside a repeat with a stop condition: that repeat's number (1, 2, ...)
    check: str = ""  # "judge" (a seat's check after a round), "stop" (the line saying the rounds stop), "decision"
    round_slots: tuple[int, ...] = ()  # a check's and a stop line's: the slots whose outcome it reads
    gate: tuple[int, ...] = ()  # the slots deciding whether this round runs at all (the previous round's check)
    note: str = ""  # a line with no template (a stop line, a decision): what it says, for the card's timeline
    # Given only on earlier speeches' answers: every condition must hold (`Condition`); and the conditions in words.
    when: tuple[Condition, ...] = ()
    when_words: str = ""
    # A speech by the first of several seats to give an answer (`by`): a later seat's slots say which of them they
    # are (1, 2, ...), as only one seat speaks and the most calls count the first seat's alone.
    alternate: int = 0

    @cached_property
    def reads_previous(self) -> bool:
        """Whether its prompt or status reads the last speech (`{previous}`, `{previous_speaker}`)."""
        names = self.template.names | self.status.names
        return "previous" in names or "previous_speaker" in names

    @property
    def ordinal(self) -> int:
        return self.index + 1


@dataclass(frozen=True)
class Layout:
    slots: tuple[Slot, ...]
    by_ordinal: Mapping[int, int]
    turns: int  # speeches in the main phase
    seats: frozenset[str] = frozenset()  # the seats its slots name
    options: Mapping[str, str] = field(default_factory=dict)  # each option's value, as placeholders read it
    stops: tuple[int, ...] = ()  # the stop lines, one a round of each repeat with a stop condition
    sources: tuple[int, ...] = ()  # the speeches whose answers conditional slots read
    # What a debate's runs share: which slots run in the usual case (no end, every seat filled by a persona), and
    # each slot's needs for a given set of running slots. Both follow from the layout alone.
    cache: dict[Any, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class PlannedCall:
    """One line of a card's timeline (the card page): what happens, who does it, what they see."""

    ordinal: int
    seat: str | None
    kind: str
    step: str
    label: str
    visibility: str
    sees: str  # in words
    reads: tuple[str, ...]  # the earlier steps its prompt quotes, as "label (seat)"
    judged_by: str | None  # the judge seat that scores this speech
    phase: str
    round: int
    calls_llm: bool
    text: str  # the template it is built from (a line no one writes: what it says)
    check: str = ""  # "judge" (a check after a round), "stop" (the rounds stopping), "decision"
    answer: str = ""  # the answer a speech gives, in words
    when: str = ""  # the answer it runs on, in words ("only if Point of information offer answered 'offer'")
    word_limit: int | None = None  # a speech's, in words


def _count(value: Count | None, options: Mapping[str, int], default: int = 0) -> int:
    if value is None:
        return default
    return options[value] if isinstance(value, str) else value


class Builder:
    """Lays a spec out at given option values."""

    def __init__(self, spec: CardSpec, options: Mapping[str, int]) -> None:
        self.spec = spec
        self.options = options
        self.slots: list[dict[str, Any]] = []
        self.turns = 0
        self.word_option = "word_limit" if any(o.name == "word_limit" for o in spec.options) else None
        judge = spec.judge
        self.judge = judge
        self.scored_seats: set[str] = set()
        self.repeats = 0
        self.in_repeat = 0  # the repeat with a stop condition being laid out, if any
        self.gate: tuple[int, ...] = ()
        self.snapshot: int | None = None
        self.condition: tuple[tuple[Condition, ...], str] | None = None
        self.alternate = 0
        # The seats of a seat group past its option's value: the debate has no such seat, so no step of theirs.
        self.absent = frozenset(
            seat for group in spec.groups for seat in group.seats[len(group.sitting(options.get(group.option, 0))) :]
        )

    def add(self, **values: Any) -> int:
        values["index"] = len(self.slots)
        values.setdefault("ref", values["step"])
        if self.in_repeat:
            values.setdefault("repeat", self.in_repeat)
            values.setdefault("gate", self.gate)
        if self.snapshot is not None:
            values.setdefault("snapshot", self.snapshot)
        if self.condition is not None:
            values["when"], values["when_words"] = self.condition
            # It waits for the answers it runs on.
            sources = [i for sources, _, _ in values["when"] for i in sources]
            values["gate"] = tuple(dict.fromkeys((*values.get("gate", ()), *sources)))
        if self.alternate:
            values["alternate"] = self.alternate
        self.slots.append(values)
        return values["index"]

    def conditioned(self, when: WhenSpec | None) -> tuple[tuple[Condition, ...], str] | None:
        """A speech's condition laid out: the latest giving before it of the speech whose answer it runs on."""
        if when is None:
            return None
        return ((self.given(when.step), when.answers, when.negate),), when.words(self.step_words(when.step))

    def step_words(self, step: str) -> str:
        """A step as a condition names it: its label, else its name in words."""
        return self.spec.labels.get(step) or default_label(step)

    def given(self, step: str, seat: str | None = None) -> tuple[int, ...]:
        """The slots of the latest giving of a speech (by `seat` alone, if named): one slot, or every slot of
        speeches given at once."""
        slots = [v for v in self.slots if v["kind"] == "TURN" and v["ref"] == step and seat in (None, v["seat"])]
        if not slots:
            return ()
        last = slots[-1]
        if last.get("snapshot") is None or seat is not None:
            return (last["index"],)
        return tuple(v["index"] for v in slots if v.get("snapshot") == last["snapshot"])

    def first_to_answer(
        self, stage: SpeechStage, round_: int, rounds: int, repeat: RepeatStage | None, common: dict[str, Any]
    ) -> None:
        """A speech by the first of its seats whose latest answer to `by`'s speech was one of its answers (the
        first member of the other bench to rise): each seat's speech is laid out, to run only if that seat
        answered so and no seat before it in the list did."""
        assert stage.by is not None
        by, outer = stage.by, self.conditioned(stage.when)
        label = self.step_words(by.step)
        names = {s.key: s.label for s in self.spec.seats}
        sources = [self.given(by.step, seat) for seat in stage.seats]
        said = " or ".join(f"'{a}'" for a in by.answers)
        answered = f"other than {said}" if by.negate else said
        for number, seat in enumerate(stage.seats):
            before = tuple((sources[j], by.answers, not by.negate) for j in range(number))
            words = f'by {names.get(seat, seat)} if the first of them to answer {answered} to "{label}"'
            self.condition = (
                (*(outer[0] if outer else ()), (sources[number], by.answers, by.negate), *before),
                f"{outer[1]}, {words}" if outer else words,
            )
            self.alternate = number
            variant = self.variant(stage, seat, round_, rounds, repeat)
            self.speech(variant, seat, stage.sees, self.words(stage.word_limit), stage.shown, common, stage.answer)
        self.condition, self.alternate = None, 0

    def words(self, value: Count | None) -> int | None:
        if value is None:
            value = self.word_option
        return _count(value, self.options) or None if value is not None else None

    def stages(self, stages: Sequence[Stage], phase: str, round_: int = 0, rounds: int = 0) -> None:
        for stage in stages:
            if isinstance(stage, RepeatStage):
                times = _count(stage.times, self.options)
                self.repeats += 1
                if stage.until is not None:
                    self.in_repeat, self.gate = self.repeats, ()
                for iteration in range(times):
                    start = len(self.slots)
                    for inner in stage.stages:
                        self.stage(inner, phase, iteration + 1, times, stage)
                    if stage.until is not None and iteration + 1 < times:
                        # The last round needs no check: the count stops the repeat there anyway.
                        self.gate = self.until(stage.until, start, phase, iteration + 1, times)
                self.in_repeat, self.gate = 0, ()
            else:
                self.stage(stage, phase, round_, rounds, None)

    def until(self, until: UntilSpec, start: int, phase: str, round_: int, rounds: int) -> tuple[int, ...]:
        """After a round of a repeat with a stop condition: the seat's check (if it is one) and the line saying
        the rounds stop, which runs only if they do. Returns what the next round waits for."""
        common = {"phase": phase, "round": round_, "rounds": rounds, "line": until.line, "field": until.field}
        round_slots = tuple(range(start, len(self.slots)))
        if until.seat:
            check = self.add(
                kind="INTERNAL",
                step="stop_check",
                label="stop check",
                seat=until.seat,
                template=until.prompt,
                sees=until.sees,
                check="judge",
                round_slots=round_slots,
                **common,
            )
            inputs: tuple[int, ...] = (check,)
            note = "If the check says the rounds are done, they stop here."
        else:
            inputs = tuple(
                i for i in round_slots if self.slots[i]["kind"] == "TURN" and self.slots[i]["ref"] == until.step
            )
            share = "all" if until.agree == 1.0 else f"{until.agree:.0%}"
            note = f"If {share} of the answers agree, the rounds stop here."
        self.add(
            kind="SYSTEM",
            step="stop",
            label="",
            seat=None,
            template=EMPTY,
            sees="none",
            check="stop",
            round_slots=inputs,
            note=note,
            **common,
        )
        return inputs

    def present(self, stage: Stage) -> Stage | None:
        """The stage with only the seats this debate has (a seat group's seats up to its option's value); None
        when none of its seats is left."""
        if not self.absent:
            return stage
        absent = self.absent
        if isinstance(stage, SpeechStage | PrivateStage):
            seats = tuple(s for s in stage.seats if s not in absent)
            return dataclasses.replace(stage, seats=seats) if seats else None
        if isinstance(stage, CrossStage):
            asker = tuple(s for s in stage.asker if s not in absent)
            answerer = tuple(s for s in stage.answerer if s not in absent)
            return dataclasses.replace(stage, asker=asker, answerer=answerer) if asker and answerer else None
        if isinstance(stage, SystemStage) and stage.seat in absent:
            return None
        return stage

    def stage(self, stage: Stage, phase: str, round_: int, rounds: int, repeat: RepeatStage | None) -> None:
        present = self.present(stage)
        if present is None:
            return
        stage = present
        common = {"phase": phase, "round": round_, "rounds": rounds, "line": stage.line, "field": stage.field}
        if isinstance(stage, SystemStage):
            self.add(
                kind="SYSTEM",
                step=stage.step,
                label=self.spec.labels.get(stage.step, ""),
                seat=stage.seat,
                template=stage.text,
                sees="none",
                status=stage.status,
                shown=stage.shown,
                **common,
            )
        elif isinstance(stage, PrivateStage):
            for seat in stage.seats:
                self.add(
                    kind=stage.kind,
                    step=stage.call.step,
                    label=stage.call.label,
                    seat=seat,
                    template=stage.call.prompt,
                    sees=stage.sees,
                    **{**common, "field": stage.call.field, "line": stage.call.line},
                )
        elif isinstance(stage, SpeechStage) and stage.seats and stage.by is not None:
            self.first_to_answer(stage, round_, rounds, repeat, common)
        elif isinstance(stage, SpeechStage) and stage.seats and stage.at_once:
            self.condition = self.conditioned(stage.when)
            self.snapshot = len(self.slots)
            for seat in stage.seats:
                variant = self.variant(stage, seat, round_, rounds, repeat)
                self.speech(variant, seat, stage.sees, self.words(stage.word_limit), stage.shown, common, stage.answer)
            self.snapshot = self.condition = None
        elif isinstance(stage, SpeechStage) and stage.seats:  # (no seats: a problem already reported)
            self.condition = self.conditioned(stage.when)
            seat = stage.seats[(round_ - 1) % len(stage.seats)] if round_ else stage.seats[0]
            variant = self.variant(stage, seat, round_, rounds, repeat)
            self.speech(variant, seat, stage.sees, self.words(stage.word_limit), stage.shown, common, stage.answer)
            self.condition = None
        elif isinstance(stage, CrossStage) and stage.asker and stage.answerer:
            exchanges = _count(stage.exchanges, self.options)
            turn = round_ - 1 if round_ else 0
            asker, answerer = stage.asker[turn % len(stage.asker)], stage.answerer[turn % len(stage.answerer)]
            words = self.words(stage.word_limit)
            earlier: list[tuple[int, int]] = []
            for number in range(1, exchanges + 1):
                question = self.turn(
                    stage.question,
                    asker,
                    stage.sees,
                    words,
                    common,
                    number,
                    earlier=tuple(earlier),
                    pair=(asker, answerer),
                )
                answer = self.turn(
                    stage.answer, answerer, stage.sees, words, common, number, question=question, pair=(asker, answerer)
                )
                earlier.append((question, answer))

    def variant(
        self, stage: SpeechStage, seat: str, round_: int, rounds: int, repeat: RepeatStage | None
    ) -> SpeechVariant:
        if repeat is None:
            return stage.base
        if round_ == 1 and stage.first is not None:
            return stage.first
        if round_ == rounds and stage.last is not None:
            return stage.last
        if stage.final is not None:
            # The seat's last speech in this stage of the repeat: no later round gives it this stage again.
            later = [
                r
                for r in range(round_ + 1, rounds + 1)
                if stage.at_once or stage.seats[(r - 1) % len(stage.seats)] == seat
            ]
            if not later:
                return stage.final
        return stage.base

    def speech(
        self,
        variant: SpeechVariant,
        seat: str,
        sees: str,
        words: int | None,
        shown: str,
        common: dict[str, Any],
        answer: AnswerSpec | None = None,
    ) -> None:
        instruction = None
        if variant.system is not None:
            instruction = self.add(
                kind="SYSTEM",
                step=variant.speech.step,
                label=variant.speech.label,
                seat=seat,
                template=variant.system,
                sees="none",
                status=variant.status,
                shown=shown,
                **common,
            )
        if variant.think is not None:
            self.add(
                kind="THINK",
                step=variant.think.step,
                label=variant.think.label,
                seat=seat,
                template=variant.think.prompt,
                sees=sees,
                status=variant.status,
                before_speech=True,
                **{**common, "field": variant.think.field, "line": variant.think.line},
            )
        given = variant.prompt_for(*self.spec.seat_names(seat))
        prompt = given or variant.system or EMPTY
        self.turn(
            variant.speech,
            seat,
            sees,
            words,
            common,
            instruction=instruction,
            template=prompt,
            status=variant.status,
            prompt_is_instruction=not given,
            answer=answer,
        )

    def turn(
        self,
        call: Call,
        seat: str,
        sees: str,
        words: int | None,
        common: dict[str, Any],
        number: int = 0,
        **extra: Any,
    ) -> int:
        self.turns += 1 if common["phase"] != "verdict" else 0
        extra.setdefault("template", call.prompt)
        index = self.add(
            kind="TURN",
            step=f"{call.step}_{number}" if number else call.step,
            ref=call.step,
            label=f"{call.label} {number}" if number and call.label else call.label,
            seat=seat,
            sees=sees,
            word_limit=words,
            turn=self.turns,
            **{**common, "field": call.field, "line": call.line},
            **extra,
        )
        self.scoring(index, call.step, seat, common)
        return index

    def scoring(self, speech: int, step: str, seat: str, common: dict[str, Any]) -> None:
        judge = self.judge
        if judge is None or judge.score is None or common["phase"] != "main":
            return
        if judge.after is not None and step not in judge.after:
            return
        first = seat not in self.scored_seats
        self.scored_seats.add(seat)
        at = {"phase": "main", "round": common["round"], "rounds": common["rounds"]}
        if judge.evaluate is not None:
            self.add(
                kind="THINK",
                step=judge.evaluate.step,
                label=judge.evaluate.label,
                seat=judge.seat,
                template=judge.evaluate.prompt,
                sees=judge.sees,
                about=speech,
                turn=self.turns,
                line=judge.evaluate.line,
                field=judge.evaluate.field,
                **at,
            )
        call = judge.score_first if first and judge.score_first is not None else judge.score
        self.add(
            kind="SCORE",
            step=call.step,
            label=call.label,
            seat=judge.seat,
            template=call.prompt,
            sees=judge.sees,
            about=speech,
            turn=self.turns,
            first_score=first,
            line=call.line,
            field=call.field,
            **at,
        )

    def verdict(self) -> None:
        judge = self.judge
        if judge is None or judge.decide is None:
            return
        parts = [
            ("deliberate", "THINK", judge.deliberate),
            ("confirm", "INTERNAL", judge.confirm),
            ("decide", "INTERNAL" if judge.announce is not None else "VERDICT", judge.decide),
            ("announce", "VERDICT", judge.announce),
        ]
        first = True
        for name, kind, call in parts:
            if call is None:
                continue
            self.add(
                kind=kind,
                step=call.step,
                label=call.label,
                seat=judge.seat,
                template=call.prompt,
                sees=judge.sees,
                phase="verdict",
                verdict=name,
                barrier=first,
                line=call.line,
                field=call.field,
            )
            first = False

    def decision(self) -> None:
        decision = self.spec.decision
        if decision is None:
            return
        self.add(
            kind="SYSTEM",
            step="decision",
            label="",
            seat=None,
            template=EMPTY,
            sees="none",
            phase="verdict",
            verdict="decision",
            barrier=True,
            check="decision",
            line=decision.line,
            field=decision.field,
            note=f"The answer is decided by {decide.RULE_WORDS[decision.rule]} over the answers to "
            f"{self.spec.labels.get(decision.step) or decision.step}.",
        )

    def layout(self) -> Layout:
        self.stages(self.spec.stages, "main")
        turns = self.turns
        end_start = len(self.slots)
        self.stages(self.spec.on_end, "end")
        if len(self.slots) > end_start:
            self.slots[end_start]["barrier"] = True
        self.verdict()
        self.decision()
        slots = tuple(self.chain())
        return Layout(
            slots=slots,
            by_ordinal={i + 1: i for i in range(len(slots))},
            turns=turns,
            seats=frozenset(s.seat for s in slots if s.seat is not None),
            options={name: str(value) for name, value in self.options.items()},
            stops=tuple(s.index for s in slots if s.check == "stop"),
            sources=tuple(sorted({i for s in slots for sources, _, _ in s.when for i in sources})),
        )

    def chain(self) -> list[Slot]:
        """Each slot's links back: the seat's own previous slot, the previous public one, the previous with the
        same step, and, for each step its templates read, the latest slot with that step."""
        last_own: dict[str, int] = {}
        last_ref: dict[str, int] = {}
        last_public = last_turn = None
        seat_keys = {s.key for s in self.spec.seats}
        slots = []
        # Speeches given at once read what was said before the first of them: the state there.
        group: tuple[int | None, dict[str, int], int | None, int | None] = (None, {}, None, None)
        for values in self.slots:
            snapshot = values.get("snapshot")
            if snapshot is not None and group[0] != snapshot:
                group = (snapshot, dict(last_ref), last_public, last_turn)
            seen_ref, seen_public, seen_turn = (
                (group[1], group[2], group[3]) if snapshot is not None else (last_ref, last_public, last_turn)
            )
            names = values["template"].names | values.get("status", EMPTY).names
            refs = []
            for name in sorted(names - seat_keys):
                for prefix in REFERENCE_PREFIXES:
                    if name.startswith(prefix):
                        step = name[len(prefix) :]
                        refs.append((name, (last_ref if prefix == "own_" else seen_ref).get(step)))
            seat = values["seat"]
            own = last_own.get(seat) if seat is not None and values["kind"] != "SYSTEM" else None
            slot = Slot(
                **values,
                prev_own=own,
                prev_public=seen_public,
                prev_ref=last_ref.get(values["ref"]),
                prev_turn=seen_turn,
                refs=tuple(refs),
            )
            slots.append(slot)
            if seat is not None and values["kind"] != "SYSTEM":
                last_own[seat] = slot.index
            last_ref[values["ref"]] = slot.index
            if slot.kind in ("TURN", "SYSTEM"):
                last_public = slot.index
            if slot.kind == "TURN":
                last_turn = slot.index
        return slots
