"""Protocol cards: a debate format written as YAML (the language: docs/cards.md; shipped cards: cards/*.yaml).

`parse_card(text)` reads and checks a card whole and returns a CardFormat, a Format like the built-in ones; it
raises CardError listing every problem, each with its line and field. A card is laid out, for given options, as
a script of slots (every system line and call in protocol order, each with a fixed ordinal: the header is 0, slot
i is i + 1), and `next_steps` runs that script over the debate's records: a slot is ready when the slots it reads
are done, the seat's own earlier slot is done, and, for a speech, the speech before it. So steps that do not read
each other run together, as in the judged duel (the judge scores a speech while the next speaker thinks).

Pure: no Django, no database. Nothing in a card is executed: prompts are templates (card/template.py) with named
placeholders from a closed list, and the parse checks every name each template uses.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Any

from chaoslm.llm.messages import Message, append_merged
from debates.formats.base import (
    PRIVATE,
    PUBLIC,
    DebateConfig,
    Format,
    FormatError,
    Plan,
    Record,
    SeatInfo,
    SeatSpec,
    Side,
    Step,
    seat_empty,
)
from debates.formats.card import decide
from debates.formats.card.decide import AnswerSpec, Vote
from debates.formats.card.fields import CardProblem, Problems, load_yaml
from debates.formats.card.layout import Builder, Condition, Layout, PlannedCall, Slot
from debates.formats.card.spec import (
    CardSpec,
    DecisionSpec,
    JudgeSpec,
    RepeatStage,
    SpecReader,
    SpeechStage,
    Stage,
)
from debates.formats.card.template import Template
from debates.formats.duel import SCORE_SCHEMA, announcement_text, match_name
from debates.formats.moderated import status_prompt

__all__ = ["CardCaps", "CardError", "CardFormat", "CardProblem", "PlannedCall", "card_format", "parse_card"]

CALLS = frozenset({"PLAN", "THINK", "TURN", "SCORE", "INTERNAL", "VERDICT"})
CHECK_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"done": {"type": "boolean"}, "reasoning": {"type": "string"}},
    "required": ["done", "reasoning"],
}
SPOKEN = ("TURN", "USER")
SEES_TEXT = {
    "own": "its own earlier calls only",
    "all": "every public statement so far",
    "last": "the opponent's last statement",
    "none": "nothing but its prompt",
}


class CardError(FormatError):
    """A card that cannot run; `problems` lists every problem found, each with its line and field."""

    def __init__(self, problems: Sequence[CardProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(f"line {p.line}: {p.field or 'card'}: {p.message}" for p in self.problems))


@dataclass(frozen=True)
class CardCaps:
    """What one card may ask for (the owner's caps): checked at the options' maximum."""

    max_calls: int = 400
    max_seats: int = 12
    max_stages: int = 200
    max_words: int = 5000
    # Names a card may not take (the built-in formats'): given by whoever saves cards.
    reserved: frozenset[str] = frozenset()


# -- a debate in progress ----------------------------------------------------------------------------------------
_BY_ORDINAL = attrgetter("ordinal")
# The cache key of which slots run when no repeat has stopped and no speech runs on an answer.
_EVERY_SLOT = ("active", (), ())


class _Run:
    """One `next_steps` call's view of a debate: which slots run, which are done, and the text each step gets."""

    def __init__(self, card: CardFormat, config: DebateConfig, records: Sequence[Record]) -> None:
        self.card = card
        self.config = config
        self.records = records
        self.layout = card.layout(config.options)
        self.seats, self.names, humans = card.seat_maps(config.seats)
        self.done: dict[int, Record] = {}
        self._histories: dict[str, list[Message]] | None = None
        self._sorted: list[Record] | None = None
        slots = self.layout.slots
        users: dict[str, list[Record]] = {}
        self.has_header = False
        # Slot i's event is ordinal i + 1 (`by_ordinal`): read by arithmetic, as this loop runs over every record
        # at every step.
        done, count = self.done, len(slots)
        for record in records:
            ordinal = record.ordinal
            if record.kind == "USER":
                users.setdefault(record.seat or "", []).append(record)
            elif 0 < ordinal <= count:
                done[ordinal - 1] = record
            elif ordinal == 0:
                self.has_header = True
        if users:
            # A person's message answers their seat's next speech: the pages store it after the last event.
            for seat, messages in users.items():
                messages.sort(key=lambda r: r.ordinal)
                speeches = [s.index for s in slots if s.kind == "TURN" and s.seat == seat]
                for index, record in zip(speeches, messages, strict=False):
                    self.done[index] = record
        cache = self.layout.cache
        # Where each repeat with a stop condition stopped: which slots run follows from it, as from the end.
        self.stopped = self._stopped() if self.layout.stops else {}
        usual = not config.is_ending and self.layout.seats <= self.seats.keys()
        if usual and not humans:
            # Which slots run follows from where the repeats stopped and the answers conditions read.
            which: tuple[Any, ...] = _EVERY_SLOT
            if self.stopped or self.layout.sources:
                done = self.done
                answered = tuple(decide.given(done[i].data) if i in done else "" for i in self.layout.sources)
                which = ("active", tuple(sorted(self.stopped.items())), answered)
            if which not in cache:
                active = self._active()
                cache[which] = (active, bytes(active))
            self.active, key = cache[which]
        else:
            self.active = self._active()
            key = bytes(self.active)
        if key not in cache:
            if len(cache) > 256:
                cache.clear()
            cache[key] = {}
        self._needs: dict[int, Any] = cache[key]

    def _active(self) -> list[bool]:
        config, seats, done = self.config, self.seats, self.done
        ending = config.is_ending
        spoken = any(s.kind == "TURN" and i in done for i, s in enumerate(self.layout.slots) if s.phase == "main")
        active = []
        for slot in self.layout.slots:
            seat = seats.get(slot.seat) if slot.seat is not None else None
            absent = slot.seat is not None and seat is None
            if absent or (seat is not None and seat.is_human and slot.kind not in ("TURN", "SYSTEM")):
                # An empty optional seat does nothing; a person makes no private calls.
                on = False
            elif slot.when and not all(self._holds(condition, active) for condition in slot.when):
                on = False  # the answer it runs on was not given
            elif slot.phase == "end":
                on = ending
            elif slot.phase == "verdict":
                on = not ending or spoken
            elif slot.about is not None and not active[slot.about]:
                on = False  # a speech not given (its seat empty, or the debate ended) is not judged
            elif slot.repeat and slot.repeat in self.stopped and slot.round > self.stopped[slot.repeat]:
                on = False  # a round after the repeat stopped
            elif slot.check == "stop":
                on = self.stopped.get(slot.repeat) == slot.round
            elif not ending or slot.index in done:
                on = True
            elif slot.kind == "TURN":
                # Its instruction is out: a persona still answers it; a person's pending turn is dropped.
                on = slot.instruction is not None and slot.instruction in done and not (seat and seat.is_human)
            else:
                on = slot.about is not None and active[slot.about]
            active.append(on)
        return active

    def _holds(self, condition: Condition, active: list[bool]) -> bool:
        """Whether a condition of a conditional slot holds: none of the speeches it reads ran (it holds only with
        `not`), one has not answered yet (it may run, and waits for it), or one of them answered one of its
        answers (with `not`: none did)."""
        sources, answers, negate = condition
        given = [i for i in sources if active[i]]
        if not given:
            return negate
        done = self.done
        if any(i not in done for i in given):
            return True
        return any(decide.given(done[i].data) in answers for i in given) != negate

    def _stopped(self) -> dict[int, int]:
        """Each repeat with a stop condition that has stopped: its number and the round after which it did (the
        first whose answers agree, or whose check said done). A round is read once all its inputs are in."""
        slots, done, stopped = self.layout.slots, self.done, {}
        for index in self.layout.stops:
            line = slots[index]
            if line.repeat in stopped:
                continue
            inputs = [i for i in line.round_slots if (slots[i].seat or "") in self.seats]
            if not inputs or not all(i in done for i in inputs):
                continue
            if slots[inputs[0]].check == "judge":
                record = done[inputs[0]]
                stop = record.data.get("done") is True and not record.data.get("fallback")
            else:
                until = self.card.untils[line.repeat]
                stop = decide.agrees([decide.given(done[i].data) for i in inputs], until.agree or 1.0)
            if stop:
                stopped[line.repeat] = line.round
        return stopped

    # -- what runs now -------------------------------------------------------------------------------------------
    def back(self, index: int | None, link: str) -> int | None:
        """The first running slot from `index` back along `link`."""
        slots, active = self.layout.slots, self.active
        while index is not None and not active[index]:
            index = getattr(slots[index], link)
        return index

    def running(self) -> list[int]:
        """The slots that run, in order (shared by every run with the same ones)."""
        order = self._needs.get(-1)
        if order is None:
            order = self._needs[-1] = [i for i, on in enumerate(self.active) if on]
        return order

    def limit(self, pending: int) -> int:
        """The first slot from which every running slot depends, directly or not, on slot `pending`."""
        key = ("limit", pending)
        found = self._needs.get(key)
        if found is None:
            ancestors = self._needs.get("ancestors")
            if ancestors is None:
                # Each running slot's ancestors as a bit mask: its needs and, through them, theirs.
                ancestors = {}
                for index in self.running():
                    mask = 0
                    for need in self.needs(self.layout.slots[index]):
                        mask |= (1 << need) | ancestors.get(need, 0)
                    ancestors[index] = mask
                self._needs["ancestors"] = ancestors
            found = len(self.layout.slots)
            for index in reversed(self.running()):
                if index <= pending or not (ancestors[index] >> pending) & 1:
                    break
                found = index
            self._needs[key] = found
        return found

    def needs(self, slot: Slot) -> frozenset[int]:
        """The slots `slot` waits for, given which slots run (so the same for every run with those)."""
        needs = self._needs.get(slot.index)
        if needs is None:
            needs = self._needs[slot.index] = frozenset(self._find_needs(slot))
        return needs

    def _find_needs(self, slot: Slot) -> list[int]:
        if slot.barrier:
            return [i for i in range(slot.index) if self.active[i]]
        needs = []
        own = self.back(slot.prev_own, "prev_own")
        if own is not None:
            needs.append(own)
        if slot.kind in ("TURN", "SYSTEM") or slot.before_speech:
            public = self.back(slot.prev_public, "prev_public")
            if public is not None:
                needs.append(public)
        if slot.instruction is not None and self.active[slot.instruction]:
            needs.append(slot.instruction)
        if slot.about is not None:
            needs.append(slot.about)
        needs += [i for i in (*slot.gate, *slot.round_slots) if self.active[i]]
        for name, start in slot.refs:
            if name.startswith("others_"):
                needs += self.others(slot, start)
                continue
            found = self.reference(slot, name, start)
            if found is not None:
                needs.append(found)
        if "previous" in slot.template.names or "previous_speaker" in slot.template.names:
            previous = self.back(slot.prev_turn, "prev_turn")
            if previous is not None:
                needs.append(previous)
        return needs

    def reference(self, slot: Slot, name: str, start: int | None) -> int | None:
        """The slot `{name}` (own_X, opponent_X, last_X) reads in `slot`: the latest running one that fits."""
        return find_reference(self.card, self.layout.slots, slot, name, start, self.active.__getitem__)

    def others(self, slot: Slot, start: int | None) -> list[int]:
        """The slots `{others_X}` reads in `slot`: each other seat's latest running speech X, in seat order."""
        return find_others(self.card, self.layout.slots, slot, start, self.active.__getitem__)

    def plan(self) -> Plan:
        steps: list[Step] = []
        if not self.has_header:
            steps.append(self.card.header(self.config))
        waiting, awaited, awaited_step = None, "", ""
        done, slots = self.done, self.layout.slots
        order = self.running()
        first = next((p for p, index in enumerate(order) if index not in done), None)
        if first is None:
            return Plan(steps=tuple(steps), finished=not steps)
        # Every slot from `limit` on waits, at least through others, for the first slot not done: none is ready.
        limit = self.limit(order[first])
        for index in order[first:]:
            if index >= limit:
                break
            if index in done:
                continue
            slot = slots[index]
            if not self.needs(slot) <= done.keys():
                continue
            seat = self.seats.get(slot.seat or "")
            if slot.kind == "TURN" and seat is not None and seat.is_human:
                waiting, awaited, awaited_step = seat.key, self.card.speech_name(slot), slot.step
                break  # nothing after a person's turn starts before it
            steps.append(self.step(slot))
        if steps:
            return Plan(steps=tuple(steps))
        return Plan(waiting_for=waiting, awaited=awaited, awaited_step=awaited_step)

    # -- building a step -----------------------------------------------------------------------------------------
    def step(self, slot: Slot) -> Step:
        values = self.values(slot)
        text = slot.template.render(values)
        if slot.check in ("stop", "decision"):
            return self.line_step(slot)
        if slot.kind == "SYSTEM":
            return Step(
                ordinal=slot.ordinal,
                kind="SYSTEM",
                step=slot.step,
                content=text,
                data={
                    "slot": slot.index,
                    "seat": slot.seat or "",
                    "stage": slot.step,
                    "round": slot.round,
                    "status": slot.status.render(values),
                },
            )
        seat = self.seats[slot.seat or ""]
        extra: dict[str, Any] = {}
        if slot.kind == "TURN":
            extra["word_limit"] = slot.word_limit
            if slot.sees == "all":
                extra["data"] = {"stage": slot.step, "round": slot.round}
            if slot.answer is not None:
                # A JSON reply, validated and retried as a judge's; one still invalid is kept as no answer.
                extra.update(
                    json_schema=slot.answer.schema(self.side_names(slot.answer)), json_fallback=True, word_limit=None
                )
                extra["data"] = {**extra.get("data", {}), "answer_kind": slot.answer.kind, "round": slot.round}
        elif slot.check == "judge":
            extra.update(json_schema=CHECK_SCHEMA, json_fallback=True, data={"check": "judge", "round": slot.round})
        elif slot.kind == "SCORE":
            speaker = self.seats[self.layout.slots[slot.about or 0].seat or ""]
            extra.update(
                json_schema=self.card.score_schema,
                json_fallback=True,
                data={"for": speaker.key, "for_name": speaker.name, "turn": slot.turn},
            )
        elif slot.verdict == "decide":
            extra.update(json_fallback=True, json_schema=self.card.verdict_schema(self.config, values["_confirmed"]))
            if self.card.judge_spec and self.card.judge_spec.confirm is not None:
                extra["data"] = {"confirmed_winner": values["_confirmed"] or None}
        return Step(
            ordinal=slot.ordinal,
            kind=slot.kind,
            step=slot.step,
            seat=seat.key,
            prompt=text,
            messages=self.messages(slot, seat, text, values),
            visibility=PUBLIC if slot.kind in ("TURN", "SCORE", "VERDICT") else PRIVATE,
            **extra,
        )

    def line_step(self, slot: Slot) -> Step:
        """A line no one writes: a repeat stopping, or the decision over the answers."""
        if slot.check == "decision":
            decision = self.card.decide_answers(self.config, [self.done[i] for i in sorted(self.done)])
            content, data = decision.line(), {"decision": decision.as_data()}
        else:
            done = self.done
            first = done[slot.round_slots[0]]
            if first.data.get("check") == "judge":
                reason = str(first.data.get("reasoning", "")).strip()
                who = self.name_of(first.seat) or "The check"
                content = (
                    f"{who} finds the question settled after round {slot.round} of {slot.rounds}: the rounds stop."
                )
                content += f" {reason}" if reason else ""
            else:
                answers = [decide.given(done[i].data) for i in slot.round_slots if i in done]
                count, answer = decide.agreement(answers)
                content = (
                    f"{count} of {len(answers)} answers agree after round {slot.round} of {slot.rounds} "
                    f"({decide.shown(answer)}): the rounds stop."
                )
            data = {"check": "stop", "round": slot.round, "rounds": slot.rounds}
        return Step(ordinal=slot.ordinal, kind="SYSTEM", step=slot.step, content=content, data=data)

    def side_names(self, answer: AnswerSpec) -> list[str]:
        """The names a `side` answer chooses from: the sides as the verdict names them."""
        return self.card.side_answers(self.config) if answer.kind == "side" else []

    def said(self, index: int) -> str:
        """What a done slot said, as others read it (an answer's reasoning, then the answer)."""
        record = self.done[index]
        return decide.spoken(record.content, record.data)

    def values(self, slot: Slot) -> dict[str, str]:
        card, config = self.card, self.config
        # An option is a placeholder of its name, unless the language gives that name a meaning of its own.
        values = {**self.layout.options, **card.base_values(config, slot.seat or "")}
        values["stage"] = slot.label
        if slot.rounds:
            values["round"], values["rounds"] = str(slot.round), str(slot.rounds)
        if slot.reads_previous:
            previous = self.back(slot.prev_turn, "prev_turn")
            if previous is not None and previous in self.done:
                values["previous"] = self.said(previous)
                values["previous_speaker"] = self.name_of(self.done[previous].seat)
        for name, start in slot.refs:
            if name.startswith("others_"):
                values[name] = "\n\n".join(
                    f"{self.name_of(self.done[i].seat)}: {self.said(i)}"
                    for i in self.others(slot, start)
                    if i in self.done
                )
                continue
            found = self.reference(slot, name, start)
            values[name] = self.said(found) if found is not None and found in self.done else ""
        if slot.answer is not None:
            values["answer_format"] = slot.answer.format_text(self.side_names(slot.answer))
        if slot.about is not None and slot.about in self.done:
            speech = self.done[slot.about]
            values.update(scored=self.name_of(speech.seat), speech=speech.content, turn=str(slot.turn))
        if slot.pair is not None:
            values["asker"], values["answerer"] = (self.name_of(seat) for seat in slot.pair)
        if slot.question is not None and slot.question in self.done:
            values["question"] = self.done[slot.question].content
        if slot.earlier:
            values["exchanges"] = "".join(
                f'\nEarlier you asked: "{self.done[q].content}"\nThey answered: "{self.done[a].content}"\n'
                for q, a in slot.earlier
                if q in self.done and a in self.done
            )
        if slot.verdict:
            values["_confirmed"] = self.confirmed()
            names_ = card.verdict_names(config)
            values["must_be"] = f"'{values['_confirmed']}'" if values["_confirmed"] else _or(names_)
        return values

    def confirmed(self) -> str:
        judge = self.card.judge_spec
        if judge is None or judge.confirm is None:
            return ""
        confirm = next((s for s in self.layout.slots if s.verdict == "confirm"), None)
        if confirm is None or confirm.index not in self.done:
            return ""
        return match_name(self.done[confirm.index].content, self.card.verdict_names(self.config)) or ""

    def name_of(self, seat: str | None) -> str:
        return self.names.get(seat or "", "")

    def messages(self, slot: Slot, seat: SeatInfo, prompt: str, values: Mapping[str, str]) -> tuple[Message, ...]:
        system: list[Message] = [{"role": "system", "content": seat.system_prompt}] if seat.system_prompt else []
        if slot.sees == "own":
            return (*self.history(seat.key), {"role": "user", "content": prompt})
        if slot.sees == "none":
            return (*system, {"role": "user", "content": prompt})
        if slot.sees == "last":
            messages = list(system)
            last = self.last_heard(slot)
            if last is not None:
                append_merged(messages, "user", f"{self.name_of(last.seat)}: {decide.spoken(last.content, last.data)}")
            append_merged(messages, "user", prompt)
            return tuple(messages)
        return self.transcript(slot, seat, prompt, slot.status.render(values))

    def history(self, seat: str) -> list[Message]:
        if self._histories is None:
            self._histories = {}
            for info in self.config.seats:
                sys_ = info.system_prompt
                self._histories[info.key] = [{"role": "system", "content": sys_}] if sys_ else []
            for record in self.ordered():
                if record.kind in CALLS and record.prompt and record.seat in self._histories:
                    self._histories[record.seat].append({"role": "user", "content": record.prompt})
                    self._histories[record.seat].append({"role": "assistant", "content": record.content})
        return self._histories[seat]

    def ordered(self) -> list[Record]:
        if self._sorted is None:
            self._sorted = sorted(self.records, key=_BY_ORDINAL)
        return self._sorted

    def last_heard(self, slot: Slot) -> Record | None:
        mine = self.card.side_of.get(slot.seat or "", "")
        cut = slot.ordinal if slot.snapshot is None else slot.snapshot + 1
        for record in reversed(self.ordered()):
            if record.ordinal >= cut or record.kind not in SPOKEN or record.seat == slot.seat:
                continue
            if not mine or self.card.side_of.get(record.seat or "", "") != mine:
                return record
        return None

    def transcript(self, slot: Slot, seat: SeatInfo, prompt: str, status: str) -> tuple[Message, ...]:
        """The moderated formats' view (docs/protocols/scheduling.md): persona and status, then every public
        statement and system line before this step, the seat's own as its replies, then its prompt."""
        side = self.card.side_label(seat.side)
        head = "\n\n".join(p for p in (seat.system_prompt, status_prompt(self.config, seat, status, side)) if p)
        messages: list[Message] = [{"role": "system", "content": head}]
        # Speeches given at once hear nothing said after the first of them began, but their own notes.
        ordinal, own = slot.ordinal, seat.key
        cut = ordinal if slot.snapshot is None else slot.snapshot + 1
        names = self.names
        # Every step of a debate reads this loop over everything said before it: kept to plain comparisons.
        for record in self.ordered():
            kind, at = record.kind, record.ordinal
            if at >= ordinal:
                if kind != "USER":
                    break
                continue
            if at >= cut and record.seat != own:
                continue
            if kind == "SYSTEM":
                append_merged(messages, "user", record.content)
            elif kind in SPOKEN and record.visibility == PUBLIC:
                if record.seat == own:
                    append_merged(messages, "assistant", record.content)
                else:
                    data = record.data
                    said = decide.spoken(record.content, data) if data.get("answer_kind") else record.content
                    append_merged(messages, "user", f"{names.get(record.seat or '') or 'Someone'}: {said}")
            elif record.seat == own and kind in CALLS and record.prompt:
                append_merged(messages, "user", record.prompt)
                append_merged(messages, "assistant", record.content)
        if not slot.prompt_is_instruction:
            append_merged(messages, "user", prompt)
        return tuple(messages)


def find_reference(
    card: CardFormat, slots: Sequence[Slot], slot: Slot, name: str, start: int | None, runs: Any
) -> int | None:
    """The slot `{name}` reads in `slot`, from `start` back: its own step (own_X), its own or a teammate's
    (team_X, private or not: partners prepare together), an opposing side's speech (opponent_X) or anyone's
    speech (last_X) with that step, among the slots that run (`runs(index)`). Outside a side, only speeches
    are read across seats: another side's private step is never found."""
    mine = card.side_of.get(slot.seat or "", "")
    index = start
    while index is not None:
        other = slots[index]
        if runs(index):
            if name.startswith("own_"):
                if other.seat == slot.seat:
                    return index
            elif name.startswith("team_"):
                if other.seat == slot.seat or (mine and card.side_of.get(other.seat or "") == mine):
                    return index
            elif name.startswith("others_"):
                if other.kind == "TURN" and other.seat != slot.seat:
                    return index
            elif other.kind == "TURN" and (
                name.startswith("last_") or (mine and card.side_of.get(other.seat or "", mine) != mine)
            ):
                return index
        index = other.prev_ref
    return None


def find_others(card: CardFormat, slots: Sequence[Slot], slot: Slot, start: int | None, runs: Any) -> list[int]:
    """The speeches `{others_X}` reads in `slot`, from `start` back: each other seat's latest running speech X, in
    the order of the card's seats."""
    found: dict[str, int] = {}
    index = start
    while index is not None:
        other = slots[index]
        if runs(index) and other.kind == "TURN" and other.seat != slot.seat and other.seat not in found:
            found[other.seat or ""] = index
        index = other.prev_ref
    order = {s.key: n for n, s in enumerate(card.seat_specs)}
    return [found[seat] for seat in sorted(found, key=lambda k: order.get(k, 0))]


def _or(names: Sequence[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    return " or ".join(quoted) if len(quoted) <= 2 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _and(names: Sequence[str]) -> str:
    return " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]


def _s(items: Sequence[Any]) -> str:
    return "s" if len(items) > 1 else ""


def _json_text(name: str) -> str:
    return json.dumps(name)[1:-1]


# -- the format ---------------------------------------------------------------------------------------------------
class CardFormat(Format):
    """A format read from a card: every attribute of a Format, from the card's text."""

    def __init__(self, spec: CardSpec, source: str) -> None:
        self.spec = spec
        self.source = source
        self.name = spec.name
        self.title = spec.title
        self.description = spec.description
        self.seat_specs = spec.seats
        self.option_specs = spec.options
        self.grouped_seats = frozenset(key for group in spec.groups for key in group.seats)
        self.judge_spec: JudgeSpec | None = spec.judge
        if spec.judge and spec.judge.rubric:
            # A rubric's verdict score is its criteria summed (`_scores`), so it is out of their maxima summed.
            self.verdict_score_max = sum(c.maximum for c in spec.judge.rubric)
        self.sides = tuple(
            Side(s.key, s.label, tuple(seat.key for seat in spec.seats if seat.side == s.key), s.stance, s.verdict)
            for s in spec.sides
        )
        self.side_by_key = {s.key: s for s in self.sides}
        self.side_of = {seat.key: seat.side for seat in spec.seats if seat.side}
        self.poll = spec.poll
        judge = spec.judge
        # A two-sided debate is judged again (a tournament panel's other judges) by the judge replay of two-sided
        # debates, which reads its public statements; a card without its own judge is judged only that way.
        two_sided = len(self.sides) == 2
        self.replayed_by = "sides_judge" if two_sided else ""
        if judge is not None:
            self.judging, self.judge_seat = "in_debate", judge.seat
        else:
            self.judging, self.judge_seat = ("replay" if two_sided else "none"), None
        self.scores_turns = judge is not None and judge.score is not None
        self.ranking_verdict = judge is not None and judge.ranking
        self.verdict_label = "Ranking" if self.ranking_verdict else "Winner"
        self.plain_steps = frozenset(step for step, label in spec.labels.items() if not label)
        # A score is the duel's 0-10 (what pages chart); with a rubric under `score`, the judge also marks the
        # speaker on each criterion, as `marks`.
        marks = judge.score_rubric if judge is not None else ()
        self.score_schema: Mapping[str, Any] = SCORE_SCHEMA
        if marks:
            self.score_schema = {
                **SCORE_SCHEMA,
                "properties": {
                    **SCORE_SCHEMA["properties"],
                    "marks": {
                        "type": "object",
                        "properties": {c.key: {"type": "integer", "minimum": 0, "maximum": c.maximum} for c in marks},
                        "required": [c.key for c in marks],
                    },
                },
                "required": [*SCORE_SCHEMA["required"], "marks"],
            }
        self.decision_spec: DecisionSpec | None = spec.decision
        # Each repeat by its number in the layout (main stages, then on_end), for those with a stop condition.
        repeats = [s for s in (*spec.stages, *spec.on_end) if isinstance(s, RepeatStage)]
        self.untils = {n: r.until for n, r in enumerate(repeats, 1) if r.until is not None}
        # The steps a decision counts: the speech's step and those of its first/last/final rounds.
        self.answer_steps: dict[str, frozenset[str]] = {}
        for stage in (*spec.stages, *(i for r in repeats for i in r.stages)):
            if isinstance(stage, SpeechStage) and stage.answer is not None:
                variants = (stage.base, stage.first, stage.final, stage.last)
                steps = frozenset(v.speech.step for v in variants if v is not None)
                for step in steps:
                    self.answer_steps[step] = self.answer_steps.get(step, frozenset()) | steps
        # Referees: judge seats whose answers naming a side the decision counts (no judge's verdict beside them).
        # Their decision is the debate's verdict, given inside it by every one of them (judging "referees").
        decided = self.decision_spec
        voting = self.answer_steps.get(decided.step, frozenset()) if decided is not None else frozenset()
        answer = spec.answers.get(decided.step) if decided is not None else None
        self.decides_sides = answer is not None and answer.kind == "side" and (judge is None or judge.decide is None)
        if self.decides_sides:
            speaking = {
                seat
                for stage in (*spec.stages, *(i for r in repeats for i in r.stages))
                if isinstance(stage, SpeechStage) and stage.base.speech.step in voting
                for seat in stage.seats
            }
            roles = {s.key: s.role for s in spec.seats}
            self.referee_seats = tuple(s.key for s in spec.seats if s.key in speaking and roles[s.key] == "judge")
            if self.referee_seats and two_sided:
                self.judging = "referees"
        self._layouts: dict[tuple[int, ...], Layout] = {}
        self._values: dict[tuple[Any, ...], Mapping[str, str]] = {}
        self._recent_seats: tuple[tuple[SeatInfo, ...], tuple[dict[str, SeatInfo], dict[str, str], bool]] | None = None
        self._recent_values: tuple[tuple[SeatInfo, ...], tuple[str, str, str], dict[str, Mapping[str, str]]] | None = (
            None
        )
        # The last options asked for and their layout: a debate asks with the same options at every step.
        self._last_layout: tuple[dict[str, Any], Layout] | None = None

    # -- layout --------------------------------------------------------------------------------------------------
    def values_of(self, options: Mapping[str, Any]) -> dict[str, int]:
        return {o.name: int(options.get(o.name, o.default)) for o in self.option_specs}

    def layout(self, options: Mapping[str, Any]) -> Layout:
        last = self._last_layout
        if last is not None and last[0] == options:
            return last[1]
        layout = self._layout(options)
        self._last_layout = (dict(options), layout)
        return layout

    def _layout(self, options: Mapping[str, Any]) -> Layout:
        values = self.values_of(options)
        key = tuple(values.values())
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= 64:
                self._layouts.clear()
            layout = self._layouts[key] = Builder(self.spec, values).layout()
        return layout

    # -- the interface every format has ------------------------------------------------------------------------
    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        return _Run(self, config, records).plan()

    def ranks_teams(self) -> bool:
        return self.ranking_verdict or len(self.sides) > 2

    def sides_for(self, options: Mapping[str, Any]) -> tuple[Side, ...]:
        return self.sides

    def statements(self, options: Mapping[str, Any]) -> int:
        """Public statements by the debaters (a moderator's and a judge's words are not statements)."""
        roles = {s.key: s.role for s in self.seat_specs}
        return sum(
            1
            for slot in self.layout(options).slots
            if slot.kind == "TURN"
            and slot.phase == "main"
            and roles.get(slot.seat or "") == "debater"
            and not slot.alternate
        )

    def calls(self, options: Mapping[str, Any]) -> int:
        # Of a speech by the first of several seats to answer, one seat speaks: count the first's calls.
        return sum(
            1
            for slot in self.layout(options).slots
            if slot.kind != "SYSTEM" and slot.phase != "end" and not slot.alternate
        )

    def gives_answers(self) -> bool:
        return bool(self.spec.answers)

    def fewest_calls(self, options: Mapping[str, Any]) -> int:
        """The calls when every repeat with a stop condition stops after its first round and no speech that runs
        only on an answer is given (`calls` is the most)."""
        return sum(
            1
            for slot in self.layout(options).slots
            if slot.kind != "SYSTEM"
            and slot.phase != "end"
            and not (slot.repeat and slot.round > 1)
            and not any(not negate for _, _, negate in slot.when)  # one that runs only on an answer may not
        )

    def step_label(self, step: str) -> str:
        if step in self.spec.labels:
            return self.spec.labels[step]
        base, _, number = step.rpartition("_")
        if number.isdigit() and base in self.spec.labels:
            label = self.spec.labels[base]
            return f"{label} {number}" if label else ""
        return super().step_label(step)

    def doing(self, step: Step, options: Mapping[str, Any]) -> str:
        layout = self.layout(options)
        index = layout.by_ordinal.get(step.ordinal)
        slot = layout.slots[index] if index is not None else None
        if slot is None or slot.step != step.step or slot.kind != "TURN" or not slot.label:
            return super().doing(step, options)
        rounds = f" (round {slot.round} of {slot.rounds})" if slot.rounds else ""
        return f"giving the {self.speech_name(slot)}{rounds}"

    def speech_name(self, slot: Slot) -> str:
        """A speech as a sentence names it: its label, or "Prime Minister's speech" where a card names the
        speech after the seat giving it (British Parliamentary, World Schools), as "giving the Prime Minister"
        would read as no sentence; so is its second part ("Prime Minister, continued": "giving the Prime
        Minister's speech, continued", after a point of information)."""
        seat = next((s.label for s in self.seat_specs if s.key == slot.seat), "")
        rest = slot.label[len(seat) :]
        if seat and slot.label.lower().startswith(seat.lower()) and (not rest or rest.startswith((",", " ("))):
            return f"{slot.label[: len(seat)]}'s speech{rest}"
        return slot.label

    def system_line(self, content: str) -> str:
        for slot in self.layout({}).slots:
            if slot.kind == "SYSTEM" and slot.shown and _matches(slot.template, content):
                return slot.shown
        return super().system_line(content)

    def silent_side(self, options: Mapping[str, Any]) -> str:
        """As any format's, and a side no seat argues (a consultancy's other answer) is silent too: a tournament
        entrant put on it would never speak."""
        unseated = next((side for side in self.sides if not side.seats), None)
        if unseated is not None:
            return f"A {self.noun} has a side no seat argues ({unseated.label}), so an entrant on it would never speak."
        return super().silent_side(options)

    def ended_early(self, options: Mapping[str, Any], statements: int) -> str:
        total = self.statements(options)
        return f"Ended by its owner after {statements} of {total} statements." if statements < total else ""

    def seats_for(self, options: Mapping[str, Any]) -> tuple[SeatSpec, ...]:
        """The seats a debate at these options has: a seat group's first N seats, N its option's value, each
        required; its seats past N are not the debate's. Seats of no group as `seat_specs` has them."""
        if not self.spec.groups:
            return self.seat_specs
        values = self.values_of(options)
        sitting: dict[str, bool] = {}
        for group in self.spec.groups:
            value = values[group.option]
            sitting.update((key, n < value) for n, key in enumerate(group.seats))
        return tuple(
            dataclasses.replace(s, required=True) if sitting.get(s.key) else s
            for s in self.seat_specs
            if sitting.get(s.key, True)
        )

    def group_problems(self, config: DebateConfig) -> list[str]:
        """What keeps the filled seats from matching each seat group's option: a seat up to its value left empty,
        a seat past it filled. Every one of them (an option out of its bounds is `validate`'s to report)."""
        problems: list[str] = []
        labels = {s.key: s.label for s in self.seat_specs}
        filled = {s.key for s in config.seats}
        for group in self.spec.groups:
            option = next(o for o in self.option_specs if o.name == group.option)
            value = config.options.get(option.name, option.default)
            if isinstance(value, bool) or not isinstance(value, int) or not option.minimum <= value <= option.maximum:
                continue
            empty = [labels[k] for k in group.sitting(value) if k not in filled]
            extra = [labels[k] for k in group.seats[value:] if k in filled]
            if empty:
                problems.append(f"{option.label} is {value}, so the {_and(empty)} seat{_s(empty)} must be filled.")
            if extra:
                highest = max(group.seats.index(k) for k in group.seats[value:] if k in filled) + 1
                problems.append(
                    f"{option.label} is {value}, so the {_and(extra)} seat{_s(extra)} must be empty "
                    f"(or set {option.label} to {highest})."
                )
        return problems

    def problems(self, config: DebateConfig) -> list[str]:
        """Every problem at once: the seats' and options' (`Format.problems`), a seat group's (in place of its
        seats' plain "empty"), a person in a persona's seat, the sides' names."""
        problems = super().problems(config)
        if grouped := self.group_problems(config):
            told = {seat_empty(s) for s in self.seat_specs if any(s.key in group.seats for group in self.spec.groups)}
            problems = [p for p in problems if p not in told] + grouped
        specs = {s.key: s for s in self.seat_specs}
        problems += [
            f"The {specs[seat.key].label} seat is for a persona, not a person."
            for seat in config.seats
            if seat.key in specs and seat.is_human and not specs[seat.key].human_allowed
        ]
        # The names are the seats' once they are filled as they should be.
        if not problems and self.judge_spec is not None and self.judge_spec.decide is not None:
            names = self.verdict_names(config)
            if len(set(names)) != len(names):
                problems.append("The sides need different names: the verdict names the winner.")
        return problems

    # -- names and values --------------------------------------------------------------------------------------
    def side_name(self, config: DebateConfig, side: Side) -> str:
        """A side as the judge names it: its one speaker's name, or the team's label."""
        if len(side.seats) == 1:
            seat = config.seat(side.seats[0])
            if seat is not None:
                return seat.name
        return side.label

    def verdict_names(self, config: DebateConfig) -> list[str]:
        return [self.side_name(config, side) for side in self.sides]

    def side_answers(self, config: DebateConfig) -> list[str]:
        """What an `answer: side` chooses from: the sides' own verdict words where every side has one ("Guilty",
        "Not guilty"), else the names the verdict gives them, in side order."""
        words = [side.verdict for side in self.sides]
        return words if all(words) else self.verdict_names(config)

    def side_of_answer(self, config: DebateConfig, answer: Any) -> str | None:
        """The side an `answer: side` chose, by the name the verdict gives it; None for no side."""
        answers = self.side_answers(config)
        return self.verdict_names(config)[answers.index(answer)] if answer in answers else None

    def base_values(self, config: DebateConfig, speaker: str) -> Mapping[str, str]:
        """The placeholders' values that depend only on the debate and the seat acting (cached: they are the same
        for every step of a debate, and a card's debates are many)."""
        # The debate asked about last, held by its seats' very tuple (an engine's run passes the same one at every
        # step): found without hashing its seats, as the keyed cache below must.
        recent = self._recent_values
        if (
            recent is not None
            and recent[0] is config.seats
            and recent[1] == (config.topic, config.premise, config.material)
            and speaker in recent[2]
        ):
            return recent[2][speaker]
        key = (config.topic, config.premise, config.material, config.seats, speaker)
        cached = self._values.get(key)
        if cached is not None:
            self._remember_values(config, speaker, cached)
            return cached
        values = {"topic": config.topic, "premise": config.premise, "material": config.material}
        for seat in config.seats:
            values[seat.key] = seat.name
            values[f"{seat.key}_json"] = _json_text(seat.name)
        if self.sides:
            names = self.verdict_names(config)
            values["sides"] = _and(names)
            values["names_or"] = _or(names)
        seat = config.seat(speaker)
        values["speaker"] = seat.name if seat else ""
        # A seat called `seat` keeps its name: the placeholder reserves no seat key (saved cards may have one).
        values.setdefault("seat", next((s.label for s in self.seat_specs if s.key == speaker), ""))
        side_key = self.side_of.get(speaker, "")
        if side_key:
            side = self.side_by_key[side_key]
            values["side"], values["stance"] = side.label, side.stance
            others = [self.side_name(config, s) for s in self.sides if s.key != side_key]
            values["opponents"] = _and(others)
            if len(self.sides) == 2:
                values["opponent"] = others[0]
        if len(self._values) > 512:
            self._values.clear()
        self._values[key] = values
        self._remember_values(config, speaker, values)
        return values

    def seat_maps(self, seats: tuple[SeatInfo, ...]) -> tuple[dict[str, SeatInfo], dict[str, str], bool]:
        """The seats by key, their names by key, and whether a person sits in one: the same for every step of a
        debate, so kept for the seats asked about last (held by that very tuple)."""
        recent = self._recent_seats
        if recent is not None and recent[0] is seats:
            return recent[1]
        maps = ({s.key: s for s in seats}, {s.key: s.name for s in seats}, any(s.is_human for s in seats))
        self._recent_seats = (seats, maps)
        return maps

    def _remember_values(self, config: DebateConfig, speaker: str, values: Mapping[str, str]) -> None:
        recent = self._recent_values
        text = (config.topic, config.premise, config.material)
        if recent is None or recent[0] is not config.seats or recent[1] != text:
            recent = self._recent_values = (config.seats, text, {})
        recent[2][speaker] = values

    def verdict_schema(self, config: DebateConfig, confirmed: str) -> dict[str, Any]:
        judge = self.judge_spec
        assert judge is not None
        names = self.verdict_names(config)
        if judge.rubric:
            score: dict[str, Any] = {
                "type": "object",
                "properties": {c.key: {"type": "integer", "minimum": 0, "maximum": c.maximum} for c in judge.rubric},
                "required": [c.key for c in judge.rubric],
            }
        else:
            score = {"type": "integer", "minimum": 0, "maximum": 10}
        scores = {"type": "object", "properties": {n: score for n in names}, "required": list(names)}
        if judge.ranking:
            ranking = {
                "type": "array",
                "items": {"type": "string", "enum": list(names)},
                "minItems": len(names),
                "maxItems": len(names),
                "uniqueItems": True,
            }
            return {
                "type": "object",
                "properties": {"ranking": ranking, "scores": scores},
                "required": ["ranking", "scores"],
            }
        winners = [confirmed] if confirmed else list(names)
        return {
            "type": "object",
            "properties": {"winner": {"type": "string", "enum": winners}, "scores": scores},
            "required": ["winner", "scores"],
        }

    # -- the result ----------------------------------------------------------------------------------------------
    def decide_answers(self, config: DebateConfig, records: Sequence[Record]) -> decide.Decision:
        """The card's decision rule over each voting seat's latest answer (in the order they were given)."""
        spec = self.decision_spec
        assert spec is not None
        answer = self.spec.answers.get(spec.step)
        return decide.decide(spec.rule, self.votes(config, records), answer.choices if answer else (), spec.tie)

    def votes(self, config: DebateConfig, records: Sequence[Record]) -> list[Vote]:
        """What the decision counts: each voting seat's latest answer, in the order they were given (an
        abstention's answer None); [] for a card with no decision."""
        spec = self.decision_spec
        if spec is None:
            return []
        steps = self.answer_steps.get(spec.step, frozenset({spec.step}))
        latest: dict[str, Record] = {}
        for record in sorted(records, key=lambda r: r.ordinal):
            voting = spec.rule != "judge" or record.seat == spec.seat
            if record.kind == "TURN" and record.step in steps and record.seat and voting:
                latest.pop(record.seat, None)
                latest[record.seat] = record
        names = {s.key: s.name for s in config.seats}
        ordered = sorted(latest.values(), key=lambda r: r.ordinal)
        return [
            Vote(r.seat or "", names.get(r.seat or "", ""), decide.given(r.data), bool(r.data.get("fallback")))
            for r in ordered
        ]

    def decision(self, records: Sequence[Record]) -> dict[str, Any] | None:
        """The stored decision of a finished debate (its rule, answer, split and reason), or None."""
        line = _decision_line(records)
        return dict(line.data["decision"]) if line is not None else None

    def outcome(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, Any]:
        """As the duel's: the winner (the first of a ranking), each side's score, premise_upheld, the announcement;
        a ranking verdict adds `ranking`, the side names best first. A card that decides by a rule over answers and
        has no verdict announces its decision."""
        judge = self.judge_spec
        if judge is None or judge.decide is None:
            line = _decision_line(records)
            if line is None:
                return {}
            winner, upheld = "", None
            if self.decides_sides:
                # The decision names a side: it is the verdict (a tie or no majority is no winner).
                names = self.verdict_names(config)
                decided = self.side_of_answer(config, line.data["decision"].get("answer"))
                if decided is not None:
                    winner = decided
                    if config.premise:
                        upheld = {"for": True, "against": False}.get(self.sides[names.index(decided)].stance)
            return {"winner": winner, "scores": {}, "premise_upheld": upheld, "announcement": line.content}
        by_step: dict[str, Record] = {}
        for record in sorted(records, key=lambda r: r.ordinal):
            if record.seat == judge.seat:
                by_step[record.step] = record
        decide = by_step.get(judge.decide.step)
        announce = by_step.get(judge.announce.step) if judge.announce is not None else decide
        if announce is None or decide is None:
            return {}
        names = self.verdict_names(config)
        data = decide.data
        running = self.running_scores(config, records)
        scores = self._scores(data.get("scores"), names) or running
        if judge.ranking:
            ranking = data.get("ranking")
            if not (isinstance(ranking, list) and sorted(ranking) == sorted(names)):
                # The judge's own scores order the teams only if it scored every one; seat order is no verdict.
                order = {n: i for i, n in enumerate(names)}
                ranked = all(n in scores for n in names)
                ranking = sorted(names, key=lambda n: (-scores[n], order[n])) if ranked else []
            outcome = {
                "winner": "",
                "scores": scores,
                "premise_upheld": None,
                "announcement": announcement_text(announce.content),
                "ranking": ranking,
            }
            unspoken = self.unspoken(config, records) if ranking else []
            if unspoken:
                # A team the debate ended before is not placed as if judged: below every team that spoke, in seat
                # order, and named so its pages say it did not speak.
                outcome["ranking"] = [n for n in ranking if n not in unspoken] + unspoken
                outcome["unspoken"] = unspoken
            outcome["winner"] = outcome["ranking"][0] if outcome["ranking"] else ""
            return outcome
        confirmed = data.get("confirmed_winner")
        if isinstance(data.get("scores"), dict) and data.get("winner") in names and self._scores(data["scores"], names):
            winner = data["winner"]
        else:
            scores = running
            winner = confirmed if confirmed in names else None
            if winner is None and len({scores.get(n, -1) for n in names}) == len(names):
                winner = max(names, key=lambda n: scores.get(n, -1))
        upheld = None
        if config.premise and winner:
            stance = self.sides[names.index(winner)].stance
            upheld = {"for": True, "against": False}.get(stance)
        return {
            "winner": winner or "",
            "scores": scores,
            "premise_upheld": upheld,
            "announcement": announcement_text(announce.content),
        }

    def unspoken(self, config: DebateConfig, records: Sequence[Record]) -> list[str]:
        """The sides none of whose seats spoke, by the names the verdict gives them; [] where nobody spoke here at
        all (a judge's replay reads its statements from elsewhere)."""
        spoke = {r.seat for r in records if r.kind in ("TURN", "USER")}
        if not spoke:
            return []
        return [self.side_name(config, side) for side in self.sides if not spoke.intersection(side.seats)]

    def fallback_words(self, config: DebateConfig, records: Sequence[Record]) -> str:
        if self.ranking_verdict:
            if self.outcome(config, records).get("ranking"):
                return "the teams are ranked by the scores it gave them"
            return "no team is ranked: it scored not every team"
        return "the winner is the one it confirmed and the scores are its running scores"

    @staticmethod
    def _scores(value: Any, names: Sequence[str]) -> dict[str, int]:
        """The verdict's scores by side name (a rubric's criteria summed), or {} if they are not all there."""
        if not isinstance(value, dict) or set(value) < set(names):
            return {}
        scores = {}
        for name in names:
            entry = value[name]
            if isinstance(entry, dict):
                if not all(isinstance(v, int) and not isinstance(v, bool) for v in entry.values()):
                    return {}
                entry = sum(entry.values())
            if isinstance(entry, bool) or not isinstance(entry, int):
                return {}
            scores[name] = entry
        return scores

    def running_scores(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, int]:
        """Each side's latest score (a team's: its speakers' latest, averaged), by the name the verdict uses."""
        latest: dict[str, int] = {}
        for record in sorted(records, key=lambda r: r.ordinal):
            if record.kind == "SCORE" and isinstance(record.data.get("score"), int):
                latest[record.data.get("for", "")] = record.data["score"]
        scores = {}
        for side in self.sides:
            got = [latest[s] for s in side.seats if s in latest]
            if got:
                scores[self.side_name(config, side)] = round(sum(got) / len(got))
        return scores

    def ranking(self, config: DebateConfig, records: Sequence[Record]) -> list[str]:
        """The finished debate's sides, best first, by the names the verdict uses ([] without a verdict)."""
        outcome = self.outcome(config, records)
        if "ranking" in outcome:
            return list(outcome["ranking"])
        if not outcome.get("winner"):
            return []
        names = self.verdict_names(config)
        return [outcome["winner"], *(n for n in names if n != outcome["winner"])]

    # -- the timeline --------------------------------------------------------------------------------------------
    def plan(self, options: Mapping[str, Any]) -> list[PlannedCall]:
        """Every system line and call of a debate at these options with every seat filled, in protocol order."""
        slots = self.layout(options).slots
        judged: dict[int, str] = {s.about: s.seat or "" for s in slots if s.kind == "SCORE" and s.about is not None}
        labels = {s.key: s.label for s in self.seat_specs}
        planned = []
        for slot in slots:
            read: list[int | None] = []
            for name, start in slot.refs:
                if name.startswith("others_"):  # every other seat's speech, not the latest alone
                    read += find_others(self, slots, slot, start, lambda _: True)
                else:
                    read.append(find_reference(self, slots, slot, name, start, lambda _: True))
            names = slot.template.names
            if "previous" in names or "previous_speaker" in names:
                read.append(slot.prev_turn)
            read += [slot.about, slot.question]
            reads = tuple(
                f"{slots[i].label or slots[i].step} ({labels.get(slots[i].seat or '', '')})"
                for i in sorted({i for i in read if i is not None})
            )
            planned.append(
                PlannedCall(
                    ordinal=slot.ordinal,
                    seat=slot.seat,
                    kind=slot.kind,
                    step=slot.step,
                    label=slot.label,
                    visibility=PUBLIC if slot.kind in ("SYSTEM", "TURN", "SCORE", "VERDICT") else PRIVATE,
                    sees="" if slot.kind == "SYSTEM" else _sees_words(slot),
                    reads=reads,
                    judged_by=judged.get(slot.index),
                    phase=slot.phase,
                    round=slot.round,
                    calls_llm=slot.kind != "SYSTEM",
                    text=slot.template.source or slot.note,
                    check=slot.check,
                    answer=slot.answer.example() if slot.answer is not None else "",
                    when=slot.when_words,
                    word_limit=slot.word_limit if slot.kind == "TURN" and slot.answer is None else None,
                )
            )
        return planned


def _sees_words(slot: Slot) -> str:
    """What a call sees, in words; a speech given at once sees nothing of the speeches given with it."""
    if slot.snapshot is None or slot.kind != "TURN" or slot.sees in ("own", "none"):
        return SEES_TEXT[slot.sees]
    return f"{SEES_TEXT[slot.sees]}, before the speeches given at once with it"


def _decision_line(records: Sequence[Record]) -> Record | None:
    """The line a card's decision was stored as, if it has one."""
    return next((r for r in records if r.kind == "SYSTEM" and isinstance(r.data.get("decision"), dict)), None)


def _matches(template: Template, content: str) -> bool:
    """Whether `content` could be `template` rendered: its literal parts in order."""
    position = 0
    for part in template.parts:
        if isinstance(part, str):
            found = content.find(part, position)
            if found < 0 or (position == 0 and found != 0 and part is template.parts[0]):
                return False
            position = found + len(part)
    last = template.parts[-1] if template.parts else ""
    return not isinstance(last, str) or content.endswith(last)


# -- parsing ------------------------------------------------------------------------------------------------------
def parse_card(text: str, caps: CardCaps | None = None) -> CardFormat:
    """Read and check a card whole; raise CardError with every problem, each with its line and field."""
    caps = caps or CardCaps()
    problems = Problems()
    data = load_yaml(text, problems)
    reader = SpecReader(problems)
    spec = reader.read(data) if data is not None or not problems.items else None
    if spec is None and not problems.items:
        problems.add(1, "", "The card must be a mapping of fields (name, title, seats, stages, ...).")
    if spec is not None:
        if spec.name and spec.name in caps.reserved:
            problems.add(_line(data, "name"), "name", f"{spec.name!r} is a built-in format's name; choose another.")
        if reader.layable:
            _check_layouts(spec, caps, problems, data)
    if problems.items:
        raise CardError(problems.found())
    assert spec is not None
    return CardFormat(spec, text)


@lru_cache(maxsize=256)
def card_format(text: str) -> CardFormat:
    """The card of this text, parsed once (a debate's snapshot of its card, read on every step)."""
    return parse_card(text)


def _line(data: Any, key: str) -> int:
    return getattr(data, "lines", {}).get(key, 1)


def _check_layouts(spec: CardSpec, caps: CardCaps, problems: Problems, data: Any) -> None:
    """What only the laid-out card shows, at the options' minimum, default and maximum: a step reading a speech
    not yet given, a judge with nothing to judge, more calls or stages than the caps, word limits over the cap."""
    if len(spec.seats) > caps.max_seats:
        problems.add(_line(data, "seats"), "seats", f"A card may have at most {caps.max_seats} seats.")
    for option in spec.options:
        if option.name == "word_limit" and option.maximum > caps.max_words:
            problems.add(
                spec.option_lines.get("word_limit", 1),
                "options.word_limit",
                f"A word limit may be at most {caps.max_words:,} words.",
            )
    card = CardFormat(spec, "")
    combos = {
        "minimum": {o.name: o.minimum for o in spec.options},
        "default": {o.name: o.default for o in spec.options},
        "maximum": {o.name: o.maximum for o in spec.options},
    }
    # A problem is reported once, naming the options that show it unless every layout does.
    found: dict[tuple[int, str, str], list[str]] = {}
    for which, options in combos.items():
        slots = card.layout(options).slots

        def note(line: int, field: str, message: str, which: str = which) -> None:
            found.setdefault((line, field, message), []).append(which)

        llm = sum(1 for s in slots if s.kind != "SYSTEM")
        if which == "maximum" and llm > caps.max_calls:
            at = " with every option at its maximum" if spec.options else ""
            problems.add(
                _line(data, "stages"), "stages", f"The card makes {llm} calls{at}; the cap is {caps.max_calls}."
            )
        for slot in slots:
            if slot.word_limit and slot.word_limit > caps.max_words:
                note(slot.line, slot.field, f"A word limit may be at most {caps.max_words:,} words")
            _check_reads(card, slot, slots, note)
        if spec.judge is not None:
            judged = [s for s in slots if s.kind == "TURN" and s.phase == "main" and s.seat in card.side_of]
            if not judged:
                note(spec.judge.line, "judge", "The judge has nothing to judge: no debater speaks")
            elif spec.judge.score is not None and not any(s.kind == "SCORE" for s in slots):
                note(spec.judge.line, "judge.score", "The judge scores no speech: check 'after'")
    for (line, where, message), which in found.items():
        at = f" (with every option at its {which[0]})" if len(which) < len(combos) and spec.options else ""
        problems.add(line, where, f"{message}{at}.")
    stage_count = _count_stages(spec.stages) + _count_stages(spec.on_end)
    if stage_count > caps.max_stages:
        problems.add(_line(data, "stages"), "stages", f"A card may have at most {caps.max_stages} stages.")


def _count_stages(stages: Sequence[Stage]) -> int:
    return sum(1 + (_count_stages(s.stages) if isinstance(s, RepeatStage) else 0) for s in stages)


def _check_reads(card: CardFormat, slot: Slot, slots: Sequence[Slot], note: Any) -> None:
    names = slot.template.names | slot.status.names
    if ("previous" in names or "previous_speaker" in names) and slot.prev_turn is None:
        note(slot.line, slot.field, "{previous} reads the speech before this one, but none is given before it")
    mine = card.side_of.get(slot.seat or "", "")
    for name, start in slot.refs:
        if name.partition("_")[2] not in card.spec.labels:
            continue  # a step no stage of the card gives: the reader's check says so once
        if find_reference(card, slots, slot, name, start, lambda _: True) is None:
            if name.startswith("opponent_") and not mine:
                why = "this seat has no side, so it has no opponent"
            elif name.startswith("own_"):
                why = "this seat has not given it before this point"
            elif name.startswith("team_"):
                why = "neither this seat nor a teammate has given it before this point"
            else:
                why = "no such speech is given before this point"
            note(slot.line, slot.field, f"{{{name}}} reads a step not yet given: {why}")
