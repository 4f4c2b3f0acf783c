"""Moderated formats (protocol: docs/protocols/scheduling.md): classic, standard and custom.

A moderated debate is a sequence of slots. Each slot is a `[SYSTEM]:` instruction, persisted as a
SYSTEM event (no LLM call), followed by the targeted seat's TURN (or a human's USER message).
The SYSTEM event's data names its slot, so the state is read straight off the transcript: the
last SYSTEM event says where the debate is, and whether its turn has been taken.

Every seat sees the public transcript (SYSTEM lines, every TURN and USER message) plus its own
persona; its system prompt is enriched with the stage and round, computed before the turn starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chaoslm.llm.messages import append_merged
from debates.formats.base import (
    PUBLIC,
    WORD_LIMIT,
    DebateConfig,
    Format,
    FormatError,
    Message,
    OptionSpec,
    Plan,
    Record,
    SeatInfo,
    SeatSpec,
    Side,
    Step,
)

INTRO = "[SYSTEM]: Topic: {topic}. Moderator, please introduce the topic and the participants."
OPENING_FLOOR = "[SYSTEM]: Opening floor. {name} is speaking next."
NEXT_SPEAKER = "[SYSTEM]: Next speaker: {name}."
MAX_ROUNDS = "[SYSTEM]: Max rounds reached. Moderator, please summarize and conclude."
TURN_LIMIT = "[SYSTEM]: Turn limit reached. Moderator, please summarize and conclude."
TERMINATION = "[SYSTEM]: Manual termination triggered. Moderator, please provide a final summary."

# Classic stages where the spec gives no text: the same voice as its own instructions.
PRO_OPENING = "[SYSTEM]: Opening statements. {pro}, please give your opening statement in favour of the motion."
CON_OPENING = "[SYSTEM]: {con}, please give your opening statement against the motion."
PRO_REBUTTAL = "[SYSTEM]: Rebuttals. {pro}, please rebut {con}'s opening statement."
CON_REBUTTAL = "[SYSTEM]: {con}, please rebut {pro}'s opening statement."
FREE_OPEN = "[SYSTEM]: Free debate. Moderator, please open the floor for a free exchange between {pro} and {con}."
FREE_TURN = "[SYSTEM]: Free debate. {name} is speaking next."
FREE_CLOSE = "[SYSTEM]: The free debate is over. Moderator, please close the exchange and invite the summaries."
PRO_SUMMARY = "[SYSTEM]: Summaries. {pro}, please summarize your case."
CON_SUMMARY = "[SYSTEM]: {con}, please summarize your case."
CONCLUSION = "[SYSTEM]: Moderator, please conclude the debate."

# What the page shows for the instructions that speak to the models in the protocol's own terms (the topic is
# already the page's title, and "Topic: Is it banned?." would double its punctuation).
SHOWN = {
    TERMINATION: "The owner ended the debate early: the moderator gives a final summary.",
    MAX_ROUNDS: "The last round is over: the moderator sums up and concludes.",
    TURN_LIMIT: "The turn limit is reached: the moderator sums up and concludes.",
}
INTRO_SHOWN = "The moderator introduces the topic and the participants."

CLASSIC_STAGES = (
    "introduction",
    "pro_opening",
    "con_opening",
    "pro_rebuttal",
    "con_rebuttal",
    "free",
    "pro_summary",
    "con_summary",
    "conclusion",
)

PARTICIPANT_KEYS = ("p1", "p2", "p3", "p4", "p5", "p6")


@dataclass(frozen=True)
class Slot:
    seat: str
    instruction: str
    stage: str
    round: int = 0
    status: str = ""  # the stage and round, as the seat's system prompt gets them


class Moderated(Format):
    """The shared machinery; subclasses say which slot comes at each index."""

    plain_steps = frozenset({"discussion"})  # a participant's turn (participant_slot)

    def slot(self, config: DebateConfig, index: int) -> Slot | None:
        raise NotImplementedError

    def system_line(self, content: str) -> str:
        intro_head, _, intro_tail = INTRO.partition("{topic}")
        if content.startswith(intro_head) and content.endswith(intro_tail):
            return INTRO_SHOWN
        return SHOWN.get(content) or super().system_line(content)

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        records = sorted(records, key=lambda r: r.ordinal)
        if not records or records[0].ordinal != 0:
            return Plan(steps=(self.header(config),))
        next_ordinal = records[-1].ordinal + 1
        systems = [r for r in records if r.kind == "SYSTEM"]
        last = systems[-1] if systems else None
        answered = last is None or any(r.ordinal > last.ordinal and r.kind in ("TURN", "USER") for r in records)
        terminating = last is not None and last.data.get("stage") == "termination"
        moderator = config.seat("moderator")

        if last is not None and not answered:
            seat = config.seat(last.data["seat"])
            assert seat is not None
            if seat.is_human and not (config.is_ending and not terminating):
                return Plan(waiting_for=seat.key)
            if not seat.is_human:
                return Plan(steps=(self._turn(config, records, last, next_ordinal),))
        if terminating:
            return Plan(finished=True)
        if config.is_ending:
            if moderator is None:
                return Plan(finished=True)
            index = last.data["slot"] + 1 if last else 0
            slot = Slot("moderator", TERMINATION, "termination", status="Stage: final summary (ended early)")
            return Plan(steps=(self._system(slot, index, next_ordinal),))
        index = last.data["slot"] + 1 if last else 0
        slot = self.slot(config, index)
        if slot is None:
            return Plan(finished=True)
        return Plan(steps=(self._system(slot, index, next_ordinal),))

    # -- steps --------------------------------------------------------------------------------------
    def _system(self, slot: Slot, index: int, ordinal: int) -> Step:
        return Step(
            ordinal=ordinal,
            kind="SYSTEM",
            step=slot.stage,
            content=slot.instruction,
            data={"slot": index, "seat": slot.seat, "stage": slot.stage, "round": slot.round, "status": slot.status},
        )

    def _turn(self, config: DebateConfig, records: Sequence[Record], system: Record, ordinal: int) -> Step:
        seat = config.seat(system.data["seat"])
        assert seat is not None
        return Step(
            ordinal=ordinal,
            kind="TURN",
            step=system.data["stage"],
            seat=seat.key,
            prompt=system.content,
            messages=shared_transcript(config, records, seat, system, self.side_label(seat.side, config.options)),
            visibility=PUBLIC,
            word_limit=config.options.get("word_limit") or None,
            data={"stage": system.data["stage"], "round": system.data.get("round", 0)},
        )

    def participants(self, config: DebateConfig) -> list[SeatInfo]:
        return [s for s in config.seats if s.key in PARTICIPANT_KEYS or s.is_human]


def status_prompt(config: DebateConfig, seat: SeatInfo, status: str, side: str) -> str:
    """The persona's status lines; `side`: the seat's side as people say it (its label), "" for none."""
    lines = [f"The debate topic is: {config.topic}"]
    if config.premise:
        lines.append(f'The premise is: "{config.premise}"')
    role = f" ({side})" if side else ""
    lines.append(f"You are {seat.name}{role}, the {seat.role} in this debate.")
    if status:
        lines.append(status)
    return "\n".join(lines)


def shared_transcript(
    config: DebateConfig, records: Sequence[Record], seat: SeatInfo, system: Record, side: str
) -> tuple[Message, ...]:
    """The seat's persona and status, then the public transcript up to its instruction, then the instruction."""
    names = {s.key: s.name for s in config.seats}
    prompt = "\n\n".join(
        p for p in (seat.system_prompt, status_prompt(config, seat, system.data.get("status", ""), side)) if p
    )
    messages: list[Message] = [{"role": "system", "content": prompt}]

    for record in records:
        if record.ordinal >= system.ordinal:
            break
        if record.kind == "SYSTEM":
            append_merged(messages, "user", record.content)
        elif record.kind in ("TURN", "USER"):
            if record.seat == seat.key:
                append_merged(messages, "assistant", record.content)
            else:
                append_merged(messages, "user", f"{names.get(record.seat or '', 'Someone')}: {record.content}")
    append_merged(messages, "user", system.content)
    return tuple(messages)


class Classic(Moderated):
    name = "classic"
    title = "Classic"
    replayed_by = "sides_judge"
    description = (
        "A moderator leads pro and con through nine fixed stages: introduction, openings, rebuttals, "
        "a free exchange, summaries and a conclusion."
    )
    seat_specs = (
        SeatSpec("moderator", "moderator", "Moderator"),
        SeatSpec("pro", "debater", "Pro", side="pro"),
        SeatSpec("con", "debater", "Con", side="con"),
    )
    option_specs = (
        OptionSpec("free_turns", "Free debate turns", 4, 1, 20, "Alternating pro and con turns in the free stage."),
        WORD_LIMIT,
    )
    sides = (Side("pro", "Pro", ("pro",), "for"), Side("con", "Con", ("con",), "against"))
    judging = "replay"
    poll = "sides"

    def statements(self, options: Mapping[str, Any]) -> int:
        """Two openings, two rebuttals, the free turns and two summaries."""
        return 6 + self.value(options, "free_turns")

    def calls(self, options: Mapping[str, Any]) -> int:
        """The debaters' statements and the moderator's four turns (introduction, opening and closing the free
        debate, conclusion)."""
        return self.statements(options) + 4

    def slot(self, config: DebateConfig, index: int) -> Slot | None:
        pro, con = config.seat("pro"), config.seat("con")
        assert pro is not None and con is not None
        free_turns = self.option(config, "free_turns")
        names = {"pro": pro.name, "con": con.name, "topic": config.topic}
        fixed_before = [
            ("moderator", INTRO, "introduction"),
            ("pro", PRO_OPENING, "pro_opening"),
            ("con", CON_OPENING, "con_opening"),
            ("pro", PRO_REBUTTAL, "pro_rebuttal"),
            ("con", CON_REBUTTAL, "con_rebuttal"),
            ("moderator", FREE_OPEN, "free"),
        ]
        free = [
            (key, FREE_TURN.format(name=names[key]), "free")
            for key in (("pro", "con")[i % 2] for i in range(free_turns))
        ]
        fixed_after = [
            ("moderator", FREE_CLOSE, "free"),
            ("pro", PRO_SUMMARY, "pro_summary"),
            ("con", CON_SUMMARY, "con_summary"),
            ("moderator", CONCLUSION, "conclusion"),
        ]
        script = fixed_before + free + fixed_after
        if index >= len(script):
            return None
        seat, text, stage = script[index]
        number = CLASSIC_STAGES.index(stage) + 1
        status = f"Stage {number} of {len(CLASSIC_STAGES)}: {stage.replace('_', ' ')}."
        if stage == "free" and len(fixed_before) <= index < len(fixed_before) + free_turns:
            status += f" Free exchange, turn {index - len(fixed_before) + 1} of {free_turns}."
        return Slot(seat, text.format(**names), stage, status=status)


def participant_slot(config: DebateConfig, roster: list[SeatInfo], turn: int, rounds: int | None) -> Slot:
    speaker = roster[turn % len(roster)]
    round_number = turn // len(roster) + 1
    text = (OPENING_FLOOR if turn == 0 else NEXT_SPEAKER).format(name=speaker.name)
    of = f" of {rounds}" if rounds else ""
    return Slot(
        speaker.key, text, "discussion", round=round_number, status=f"Round {round_number}{of}, turn {turn + 1}."
    )


class Standard(Moderated):
    name = "standard"
    title = "Standard"
    description = (
        "A moderator introduces the topic, then participants (and you, if you take a seat) speak in turn "
        "until you end the debate."
    )
    seat_specs = (
        SeatSpec("moderator", "moderator", "Moderator", required=False),
        SeatSpec("p1", "debater", "Participant 1"),
        SeatSpec("p2", "debater", "Participant 2"),
        SeatSpec("p3", "debater", "Participant 3", required=False),
        SeatSpec("p4", "debater", "Participant 4", required=False),
        SeatSpec("human", "participant", "You (a human seat)", required=False, human_allowed=True),
    )
    option_specs = (
        OptionSpec(
            "max_turns", "Turn limit", 30, 1, 200, "A safety cap: the moderator concludes after this many turns."
        ),
        WORD_LIMIT,
    )
    poll = "people"

    def statements(self, options: Mapping[str, Any]) -> int:
        return self.value(options, "max_turns")

    def calls(self, options: Mapping[str, Any]) -> int:
        """At most the turn limit (the moderator is optional; it adds an introduction and a summary)."""
        return self.statements(options)

    def validate(self, config: DebateConfig) -> None:
        super().validate(config)
        human = config.seat("human")
        if human is not None and not human.is_human:
            raise FormatError("The human seat is for a person, not a persona.")

    def slot(self, config: DebateConfig, index: int) -> Slot | None:
        moderator = config.seat("moderator")
        if moderator is not None:
            if index == 0:
                return Slot(
                    "moderator", INTRO.format(topic=config.topic), "introduction", status="Stage: introduction."
                )
            index -= 1
        max_turns = self.option(config, "max_turns")
        if index < max_turns:
            return participant_slot(config, self.participants(config), index, None)
        if index == max_turns and moderator is not None:
            return Slot("moderator", TURN_LIMIT, "summary", status="Stage: summary.")
        return None


class Custom(Moderated):
    name = "custom"
    title = "Custom"
    description = (
        "A moderator introduces the topic, participants speak for a set number of rounds, then the moderator sums up."
    )
    seat_specs = (
        SeatSpec("moderator", "moderator", "Moderator"),
        SeatSpec("p1", "debater", "Participant 1"),
        SeatSpec("p2", "debater", "Participant 2"),
        SeatSpec("p3", "debater", "Participant 3", required=False),
        SeatSpec("p4", "debater", "Participant 4", required=False),
    )
    option_specs = (OptionSpec("max_rounds", "Rounds", 3, 1, 20, "Every participant speaks once a round."), WORD_LIMIT)
    poll = "people"

    def statements(self, options: Mapping[str, Any]) -> int:
        """The two required participants' turns, every round (each optional participant adds one a round)."""
        return 2 * self.value(options, "max_rounds")

    def calls(self, options: Mapping[str, Any]) -> int:
        """The participants' turns, the moderator's introduction and summary."""
        return self.statements(options) + 2

    def slot(self, config: DebateConfig, index: int) -> Slot | None:
        if index == 0:
            return Slot("moderator", INTRO.format(topic=config.topic), "introduction", status="Stage: introduction.")
        roster = self.participants(config)
        rounds = self.option(config, "max_rounds")
        turn = index - 1
        if turn < rounds * len(roster):
            return participant_slot(config, roster, turn, rounds)
        if turn == rounds * len(roster):
            return Slot("moderator", MAX_ROUNDS, "summary", status="Stage: summary.")
        return None
