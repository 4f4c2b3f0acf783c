"""What every format shares: the read-only view of a debate a format gets, and the steps it returns.

A format is pure: `next_steps(config, records)` looks only at the debate's configuration and its
persisted events and returns the steps that are ready now. No database, no LLM, no counters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from chaoslm.llm.messages import Message

PUBLIC = "public"
PRIVATE = "private"

# Kinds that are calls to a seat's model, and so part of that seat's own chat history.
CALL_KINDS = frozenset({"PLAN", "THINK", "TURN", "SCORE", "VERDICT", "INTERNAL"})


@dataclass(frozen=True)
class SeatInfo:
    key: str
    role: str
    name: str
    side: str = ""
    system_prompt: str = ""
    is_human: bool = False


@dataclass(frozen=True)
class DebateConfig:
    format: str
    topic: str
    premise: str = ""
    material: str = ""  # text the debate carries beyond its topic (a passage, a question and its answers)
    options: Mapping[str, Any] = field(default_factory=dict)
    seats: tuple[SeatInfo, ...] = ()
    is_ending: bool = False

    def seat(self, key: str) -> SeatInfo | None:
        return next((s for s in self.seats if s.key == key), None)


@dataclass(frozen=True)
class Record:
    """A persisted event, as a format sees it."""

    ordinal: int
    kind: str
    seat: str | None = None
    step: str = ""
    prompt: str = ""
    content: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)
    visibility: str = PUBLIC


@dataclass(frozen=True)
class Step:
    """One thing to do now: usually one LLM call; HEADER and SYSTEM steps are persisted without one."""

    ordinal: int
    kind: str
    step: str
    seat: str | None = None
    prompt: str = ""
    messages: tuple[Message, ...] = ()
    visibility: str = PUBLIC
    json_schema: Mapping[str, Any] | None = None
    # On JSON that stays invalid after the gateway's attempts: persist a fallback instead of failing.
    json_fallback: bool = False
    word_limit: int | None = None
    content: str = ""  # the text of a step that makes no call
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def calls_llm(self) -> bool:
        return bool(self.messages)


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...] = ()
    finished: bool = False
    waiting_for: str | None = None  # a human seat's key, when the debate waits for their message
    awaited: str = ""  # the step that message gives, by its label ("Negative rebuttal"), where the format has one
    awaited_step: str = ""  # that step's name, stored on the message so its card and exports label it


class FormatError(ValueError):
    """A configuration or transcript a format cannot work with; the message names the problem, or every one of
    them (`sentences`, one a problem, the message all of them in order)."""

    def __init__(self, *sentences: str) -> None:
        super().__init__(" ".join(sentences))
        self.sentences: tuple[str, ...] = sentences


def seat_empty(spec: SeatSpec) -> str:
    """The problem of a required seat left empty."""
    return f"The {spec.label} seat is empty."


@dataclass(frozen=True)
class OptionSpec:
    name: str
    label: str
    default: int
    minimum: int
    maximum: int
    help: str = ""


WORD_LIMIT = OptionSpec("word_limit", "Word limit", 0, 0, 5000, "Truncate each statement to this many words (0: none).")


@dataclass(frozen=True)
class SeatSpec:
    key: str
    role: str
    label: str
    side: str = ""
    required: bool = True
    human_allowed: bool = False


@dataclass(frozen=True)
class Side:
    """One side (or team) of a debate: which seats argue it, in speaking order, and whether it argues for or
    against the motion (a team in a ranking format argues neither)."""

    key: str
    label: str
    seats: tuple[str, ...]
    stance: str = ""  # "for" | "against" | ""
    verdict: str = ""  # what its win is called, where the protocol has a word for it ("Not guilty")


# How a debate of a format is judged: by a judge seat inside it, by a judge replay afterwards, or not at all.
# "referees": several judge seats inside the debate each name a side, and a rule over their answers decides.
JUDGING = ("in_debate", "referees", "replay", "none")

# The step of a person's message from a human seat, in any format (debates/services.py writes it).
PERSON_STEP = "human"

# What a seat is doing during a step its format's `doing_words` do not name, by the step's kind.
DOING_BY_KIND = {
    "PLAN": "planning",
    "THINK": "thinking",
    "TURN": "speaking",
    "SCORE": "scoring",
    "VERDICT": "announcing the verdict",
    "INTERNAL": "weighing the verdict",
}


class Format:
    name: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str]
    # Whether its judge scores each turn (the page's running-scores chart), and what its verdict names.
    scores_turns: ClassVar[bool] = True
    verdict_label: ClassVar[str] = "Winner"
    # What a verdict's score (and a running score) is out of, as the pages write it: "7/10".
    verdict_score_max: int = 10
    seat_specs: ClassVar[tuple[SeatSpec, ...]]
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()
    # The seats of a card's seat groups (as many of them sit as the group's option says: `seats_for`).
    grouped_seats: frozenset[str] = frozenset()
    # Offered in the new-debate form and the `debate` command; a judge replay is made from a duel instead.
    listed: ClassVar[bool] = True
    # A judge replay reads another debate's public turns (its options name it: `source_debate`); its page links
    # to that debate for a viewer who may open it.
    replays_a_debate: ClassVar[bool] = False
    # A template the debate page's header includes under the topic, with the debate's options as `replay`.
    header_template: ClassVar[str] = ""
    # The judge replay format that judges a finished debate of this format again (a panel's other judges).
    replayed_by: ClassVar[str] = ""
    # The status line's words for what a seat does during each of this format's steps, by step name.
    doing_words: ClassVar[Mapping[str, str]] = {}
    # The steps that are this format's ordinary turns: their cards name no step (see `step_label`).
    plain_steps: ClassVar[frozenset[str]] = frozenset()

    # Its sides (or teams): () when its speakers take no sides (a panel, a free discussion).
    sides: ClassVar[tuple[Side, ...]] = ()
    # How its debates are judged (one of JUDGING), and the seat of its own judge, if it has one.
    judging: ClassVar[str] = "none"
    judge_seat: ClassVar[str | None] = None
    # Judging "referees": the judge seats whose answers decide, in seat order.
    referee_seats: ClassVar[tuple[str, ...]] = ()
    # The audience's vote: "sides" (a poll for or against, before and after), "people" (one vote after the end
    # for the speaker who argued best) or "" (none).
    poll: ClassVar[str] = ""
    # The option listing what each side argues, when its sides argue answers rather than a motion (the poll then
    # names each side by its answer): an option holding a list, in the order of `sides`.
    side_answers_option: ClassVar[str] = ""
    # The option holding a text its speakers quote, whose quotes every export shows as checked against it.
    quotes_option: ClassVar[str] = ""
    # The option naming which of the answers its one speaker is assigned to argue, when a lone speaker argues an
    # answer it did not choose rather than a side (a consultancy): "" for a format without one.
    assigned_answer_option: ClassVar[str] = ""

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        raise NotImplementedError

    # -- what the rest of the code knows of a format --------------------------------------------------------------
    @property
    def noun(self) -> str:
        """One of its debates in a sentence ("2 structured debates and 4 judge replays"), pluralised with an "s"."""
        return f"{self.name} debate"

    def sides_for(self, options: Mapping[str, Any]) -> tuple[Side, ...]:
        """Its sides at these options (a card may vary its teams by an option)."""
        return self.sides

    def seats_for(self, options: Mapping[str, Any]) -> tuple[SeatSpec, ...]:
        """The seats a debate at these options has (a card's seat group has as many as its option says)."""
        return self.seat_specs

    def seat_for(self, stance: str) -> str | None:
        """The first seat of the side with this stance ("for", "against"), if it has one."""
        side = next((s for s in self.sides if s.stance == stance), None)
        return side.seats[0] if side and side.seats else None

    def gives_answers(self) -> bool:
        """Whether some of its speeches give an answer (a card's `answer:`), which its status line tallies."""
        return False

    def ranks_teams(self) -> bool:
        """Whether its verdict ranks more than two teams rather than naming one of two sides the winner."""
        return len(self.sides) > 2

    def silent_side(self, options: Mapping[str, Any]) -> str:
        """Why a debate at these options would leave one of its sides silent (a judge would then score a side that
        never spoke), or "": its statements are fewer than its sides."""
        count = self.statements(options)
        if not self.sides or count >= len(self.sides):
            return ""
        return (
            f"A {self.noun} needs every side to speak: these options give {count} "
            f"statement{'s' if count != 1 else ''} for its {len(self.sides)} sides."
        )

    def value(self, options: Mapping[str, Any], name: str) -> int:
        """An option's value in `options`, or its default there (`options` may hold other formats' options too)."""
        spec = next(o for o in self.option_specs if o.name == name)
        return int(options.get(name, spec.default))

    def effective_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """A debate's options as it runs at them, from those it was given (as stored): every option of the format,
        at its default where they do not set it, and whatever else they hold (a replay's source, a passage)."""
        return {**{o.name: o.default for o in self.option_specs}, **options}

    def statements(self, options: Mapping[str, Any]) -> int:
        """The public statements its speakers make at these options (the seats of its sides, or where it has none,
        every seat but a moderator and a judge): what a judge replay of it would read."""
        return 0

    def calls(self, options: Mapping[str, Any]) -> int:
        """The LLM calls one of its debates makes at these options, with its required seats filled (an upper
        bound for a format that may end sooner); for estimates."""
        return self.statements(options)

    def header(self, config: DebateConfig) -> Step:
        """The first event of every debate: what it is about and who sits where. No LLM call."""
        return Step(
            ordinal=0,
            kind="HEADER",
            step="header",
            content=config.topic,
            data={
                "topic": config.topic,
                "premise": config.premise,
                "format": self.name,
                "options": {o.name: self.option(config, o.name) for o in self.option_specs},
                "seats": [
                    {"key": s.key, "name": s.name, "role": s.role, "side": s.side, "human": s.is_human}
                    for s in config.seats
                ],
            },
        )

    def replay_options(
        self, config: DebateConfig, records: Sequence[Record], source_debate: int | None = None
    ) -> dict[str, Any]:
        """A judge replay format's options, copied from the finished debate (`config`, its public `records`) it
        judges, so the replay never reads another debate."""
        raise FormatError(f"{self.title} does not judge another debate.")

    def doing(self, step: Step, options: Mapping[str, Any]) -> str:
        """What a seat is doing during `step`, for the status line: "giving the opening statement"."""
        return self.doing_words.get(step.step) or DOING_BY_KIND.get(step.kind, "working")

    def step_label(self, step: str) -> str:
        """The step a public event's card (and the terminal) names after the speaker: "opening statement" for
        `opening_statement`; nothing where the name tells a reader nothing, for the format's ordinary turns and a
        person's message."""
        if step in self.plain_steps or step == PERSON_STEP:
            return ""
        return step.replace("_", " ")

    def step_title(self, step: str) -> str:
        """The step as a heading in an export ("Cross-examination question 1"); nothing where `step_label` says
        nothing."""
        label = self.step_label(step)
        return label[:1].upper() + label[1:]

    def system_line(self, content: str) -> str:
        """A SYSTEM event as a person reads it on the page. The models get `content` verbatim (the protocol's own
        "[SYSTEM]: ..." instruction); the page drops the marker meant for them."""
        return content.removeprefix("[SYSTEM]: ")

    def ended_early(self, options: Mapping[str, Any], statements: int) -> str:
        """The status line's note on a finished debate its owner ended (`statements`: public turns given)."""
        return "Ended early by its owner."

    def outcome(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, Any]:
        """Fields to set on the finished debate (winner, scores, ...). Most formats have none."""
        return {}

    def side_label(self, key: str, options: Mapping[str, Any] | None = None) -> str:
        """A side as people say it ("Closing Opposition"), from its key, at these options (its declared sides
        without them); the key itself for a side it has not, "" for no side."""
        sides = self.sides_for(options) if options is not None else self.sides
        return next((side.label for side in sides if side.key == key), key)

    def fallback_words(self, config: DebateConfig, records: Sequence[Record]) -> str:
        """What the outcome stands on when the judge's verdict JSON stayed invalid (`verdict_fallback`)."""
        return "the outcome is read from its other replies"

    def verdict_fallback(self, config: DebateConfig, records: Sequence[Record]) -> str:
        """Why the verdict is not the judge's own, or "" when it is: its verdict JSON stayed invalid after the
        gateway's attempts, so the outcome fell back (page, share page, exports and API all say so)."""
        failed = next(
            (
                r
                for r in records
                if r.kind in ("INTERNAL", "VERDICT") and r.data.get("fallback") and not r.data.get("check")
            ),
            None,
        )
        if failed is None:
            return ""
        return f"The judge gave no valid verdict after three attempts, so {self.fallback_words(config, records)}."

    def decision(self, records: Sequence[Record]) -> dict[str, Any] | None:
        """A debate's answer as decided by a rule over its seats' answers (rule, answer, split, voters, reason):
        a card's `decision`. Most formats decide none."""
        return None

    def fewest_calls(self, options: Mapping[str, Any]) -> int:
        """The calls a debate makes when every stop condition holds as early as it can (`calls`: the most)."""
        return self.calls(options)

    def option(self, config: DebateConfig, name: str) -> int:
        spec = next(o for o in self.option_specs if o.name == name)
        return int(config.options.get(name, spec.default))

    def validate(self, config: DebateConfig) -> None:
        """Raise FormatError naming every problem with seats and options (`problems`) at once."""
        if problems := self.problems(config):
            raise FormatError(*problems)

    def problems(self, config: DebateConfig) -> list[str]:
        """Every problem with the debate's topic, seats and options, in that order: an empty required seat, a seat
        the format has not, an option not a whole number or out of its bounds, an option the format has not."""
        problems = []
        if not config.topic.strip():
            problems.append("The topic must have at least one non-whitespace character.")
        problems += [seat_empty(spec) for spec in self.seat_specs if spec.required and config.seat(spec.key) is None]
        known = {s.key for s in self.seat_specs}
        problems += [f"{self.title} has no seat called {seat.key!r}." for seat in config.seats if seat.key not in known]
        for option in self.option_specs:
            value = config.options.get(option.name, option.default)
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(f"{option.label} must be a whole number.")
            elif not option.minimum <= value <= option.maximum:
                problems.append(f"{option.label} must be from {option.minimum} to {option.maximum}.")
        unknown = set(config.options) - {o.name for o in self.option_specs}
        problems += [f"{self.title} has no option called {name!r}." for name in sorted(unknown)]
        return problems


class Histories:
    """Each seat's own chat so far: its system prompt, then its earlier (prompt, reply) pairs in ordinal order.

    This is the default context rule: no other seat's events ever enter a seat's history.
    Built once per `next_steps` call, in one pass over the records.
    """

    def __init__(self, config: DebateConfig, records: Iterable[Record]) -> None:
        self._messages: dict[str, list[Message]] = {}
        for seat in config.seats:
            self._messages[seat.key] = [{"role": "system", "content": seat.system_prompt}] if seat.system_prompt else []
        for record in sorted(records, key=lambda r: r.ordinal):
            if record.kind in CALL_KINDS and record.prompt and record.seat in self._messages:
                self._messages[record.seat].append({"role": "user", "content": record.prompt})
                self._messages[record.seat].append({"role": "assistant", "content": record.content})

    def with_prompt(self, seat: str, prompt: str) -> tuple[Message, ...]:
        return (*self._messages[seat], {"role": "user", "content": prompt})


class StepBuilder:
    """Collects the ready steps of one `next_steps` call: a step runs once, when the records it reads exist."""

    def __init__(self, config: DebateConfig, records: Sequence[Record]) -> None:
        self.done = {r.ordinal: r for r in records}
        self.histories = Histories(config, records)
        self.steps: list[Step] = []

    def call(
        self,
        seat: str,
        ordinal: int,
        kind: str,
        name: str,
        prompt: str,
        needs: Sequence[int] = (),
        visibility: str = PRIVATE,
        **extra: Any,
    ) -> None:
        # Readiness first: the prompt and history are built only for a step that can run now.
        if ordinal in self.done or not all(n in self.done for n in needs):
            return
        self.steps.append(
            Step(
                ordinal=ordinal,
                kind=kind,
                step=name,
                seat=seat,
                prompt=prompt,
                messages=self.histories.with_prompt(seat, prompt),
                visibility=visibility,
                **extra,
            )
        )


def single_turn(seat: SeatInfo, prompt: str) -> tuple[Message, ...]:
    """A call that carries its whole context in its prompt, after the seat's persona."""
    system = [{"role": "system", "content": seat.system_prompt}] if seat.system_prompt else []
    return (*system, {"role": "user", "content": prompt})
