"""Reading a protocol card: YAML text -> a CardSpec, with every problem found at once (docs/cards.md).

This module checks what the text says on its own: the fields and their types (read with fields.py, which reads the
YAML), the seats and sides, the option bounds, the templates and which placeholders each may use. format.py then
lays the card out for its option bounds and checks what only the layout shows (a speech read before it is given,
the caps on calls).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from debates.formats.base import OptionSpec, SeatSpec
from debates.formats.card import placeholders
from debates.formats.card.decide import ANSWER_KINDS, RULE_KINDS, RULES, TIES, AnswerSpec
from debates.formats.card.fields import KEY, LList, LMap, Problems, Reader, listed
from debates.formats.card.placeholders import RESERVED_PREFIXES, RESERVED_SEAT_KEYS
from debates.formats.card.template import EMPTY, Template

MAX_OPTION = 100_000  # the largest bound an option may have
SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,99}")
ROLES = ("debater", "judge", "moderator")
STANCES = ("for", "against", "")
SEES = ("own", "all", "last", "none")
POLLS = ("sides", "people", "")
STAGE_TYPES = ("speech", "cross", "repeat", "plan", "think", "system")
# The placeholders and which names they reserve: placeholders.py, one table.
MAX_CHOICES = 26  # choices an answer may have
MAX_CHOICE = 100  # characters of one choice
MAX_GROUP = 50  # seats one seat group may expand to (the caps' seats bound a card further)


# -- the spec ------------------------------------------------------------------------------------------------------
Count = int | str  # a number, or the name of an option holding it


@dataclass(frozen=True)
class Call:
    """One call's text: its step name, label and prompt, and where the card says it (for problems)."""

    step: str
    label: str
    prompt: Template
    line: int
    field: str


@dataclass(frozen=True)
class SpeechVariant:
    speech: Call
    think: Call | None
    system: Template | None
    status: Template
    # A prompt given seat by seat (`prompt: {affirmative: ..., negative: ...}`): each key a seat, a seat group, a side,
    # or `other`; `speech.prompt` is then `other`'s, or empty.
    by_seat: tuple[tuple[str, Template], ...] = ()

    def prompt_for(self, *keys: str) -> Template:
        """The prompt of a seat known by `keys` (its own key, its group's, its side's), the most particular first."""
        given = dict(self.by_seat)
        return next((given[k] for k in keys if k in given), self.speech.prompt)


@dataclass(frozen=True)
class SpeechStage:
    seats: tuple[str, ...]  # with at_once, every one of them speaks; else one a round, in turn
    base: SpeechVariant
    first: SpeechVariant | None
    final: SpeechVariant | None
    last: SpeechVariant | None  # the repeat's last round, whoever speaks in it
    sees: str
    word_limit: Count | None
    shown: str
    line: int
    field: str
    at_once: bool = False  # every seat listed speaks, all reading what was said before the first of them
    answer: AnswerSpec | None = None  # the answer each speech gives, in JSON
    when: WhenSpec | None = None  # given only on an earlier speech's answer
    by: WhenSpec | None = None  # given by the first of its seats whose answer to a speech was one of these


@dataclass(frozen=True)
class PrivateStage:
    kind: str  # PLAN or THINK
    seats: tuple[str, ...]
    call: Call
    sees: str
    line: int
    field: str


@dataclass(frozen=True)
class SystemStage:
    seat: str | None
    step: str
    text: Template
    status: Template
    shown: str
    line: int
    field: str


@dataclass(frozen=True)
class CrossStage:
    asker: tuple[str, ...]  # inside a repeat, round r's is the r-th of the list, in turn
    answerer: tuple[str, ...]
    exchanges: Count
    question: Call
    answer: Call
    sees: str
    word_limit: Count | None
    line: int
    field: str


@dataclass(frozen=True)
class WhenSpec:
    """A speech given only on an earlier speech's answer: it runs when the latest `step` before it answered one of
    `answers` (with `negate`: when it answered none of them, or did not run)."""

    step: str
    answers: tuple[str, ...]
    negate: bool
    line: int
    field: str

    def words(self, label: str) -> str:
        """The condition as the card's timeline says it."""
        said = " or ".join(f"'{a}'" for a in self.answers)
        return f'{"unless" if self.negate else "only if"} the answer to "{label}" is {said}'


@dataclass(frozen=True)
class UntilSpec:
    """When a repeat stops before its count: its answers agree (`agree`, the share that must), or a seat's
    yes/no check after each round says so."""

    agree: float | None
    step: str  # the answering speech whose answers must agree (agree only)
    seat: str  # the seat asked (a check only)
    prompt: Template
    sees: str
    line: int
    field: str


@dataclass(frozen=True)
class RepeatStage:
    times: Count
    stages: tuple[Any, ...]
    line: int
    field: str
    until: UntilSpec | None = None


@dataclass(frozen=True)
class DecisionSpec:
    """How the debate's answer is decided from its seats' answers: a rule over each seat's latest answer to
    `step` (rule `judge`: the answer of `seat`)."""

    rule: str
    step: str
    seat: str
    tie: str
    line: int
    field: str


Stage = SpeechStage | PrivateStage | SystemStage | CrossStage | RepeatStage


@dataclass(frozen=True)
class Criterion:
    key: str
    label: str
    maximum: int


@dataclass(frozen=True)
class JudgeSpec:
    seat: str
    sees: str
    after: frozenset[str] | None  # the speech steps it scores; None: every speech
    evaluate: Call | None
    score: Call | None
    score_first: Call | None
    deliberate: Call | None
    confirm: Call | None
    decide: Call | None
    announce: Call | None
    ranking: bool
    rubric: tuple[Criterion, ...]
    line: int
    score_rubric: tuple[Criterion, ...] = ()  # a speaker's marks by criterion, given with each score


@dataclass(frozen=True)
class SideSpec:
    key: str
    label: str
    stance: str
    verdict: str = ""  # what its win is called ("Not guilty"); "" for "Winner: <label>"


@dataclass(frozen=True)
class SeatGroup:
    """A seat group: `key_1` .. `key_N`, N the value of the option `option` (at most its maximum, `seats`)."""

    key: str
    option: str
    seats: tuple[str, ...]  # every seat it may have, at the option's maximum, in order
    line: int
    field: str

    def sitting(self, value: int) -> tuple[str, ...]:
        """The seats a debate whose option is `value` has."""
        return self.seats[: max(value, 0)]


@dataclass(frozen=True)
class CardSpec:
    name: str
    title: str
    description: str
    options: tuple[OptionSpec, ...]
    seats: tuple[SeatSpec, ...]
    sides: tuple[SideSpec, ...]
    poll: str
    stages: tuple[Stage, ...]
    on_end: tuple[Stage, ...]
    judge: JudgeSpec | None
    labels: dict[str, str] = field(default_factory=dict)
    decision: DecisionSpec | None = None
    answers: dict[str, AnswerSpec] = field(default_factory=dict)  # each answering step's answer
    option_lines: dict[str, int] = field(default_factory=dict)
    groups: tuple[SeatGroup, ...] = ()  # the seat groups, each expanded into `seats`

    def seat_names(self, seat: str) -> tuple[str, ...]:
        return seat_names(seat, self.seats, self.groups)


def seat_names(seat: str, seats: Iterable[SeatSpec], groups: Iterable[SeatGroup]) -> tuple[str, ...]:
    """What a seat may be called where a card gives something seat by seat: its key, its group's, its side's, then
    `other`, the most particular first."""
    side = next((s.side for s in seats if s.key == seat), "")
    return (seat, *(g.key for g in groups if seat in g.seats), *([side] if side else []), "other")


def default_label(step: str) -> str:
    return step.replace("_", " ")


# -- the card ------------------------------------------------------------------------------------------------------
TOP_FIELDS = (
    "name",
    "title",
    "description",
    "options",
    "seats",
    "sides",
    "poll",
    "stages",
    "on_end",
    "judge",
    "decision",
)
OPTION_FIELDS = ("label", "default", "min", "max", "help")
SEAT_FIELDS = ("key", "role", "label", "side", "required", "human_allowed", "count")
SIDE_FIELDS = ("key", "label", "stance", "verdict")
CALL_FIELDS = ("step", "label", "prompt")
VARIANT_FIELDS = ("step", "label", "prompt", "think", "system", "status")
VARIANTS = ("first", "final", "last")
SPEECH_FIELDS = (
    "speech",
    "seat",
    "label",
    "prompt",
    "sees",
    "word_limit",
    "think",
    "system",
    "status",
    "shown",
    "at_once",
    "answer",
    "when",
    "by",
)
REPEAT_FIELDS = ("repeat", "stages", "until")
UNTIL_FIELDS = ("agree", "step", "seat", "prompt", "sees")
DECISION_FIELDS = ("rule", "step", "seat", "tie")
ANSWER_FIELDS = ("choices", "pick")
WHEN_FIELDS = ("step", "answer", "not")
PRIVATE_FIELDS = ("seat", "label", "prompt", "sees")
SYSTEM_FIELDS = ("system", "seat", "step", "status", "shown")
CROSS_FIELDS = ("cross", "asker", "answerer", "exchanges", "label", "question", "answer", "sees", "word_limit")
JUDGE_FIELDS = ("seat", "sees", "score", "verdict", "rubric")
SCORE_FIELDS = ("after", "evaluate", "step", "label", "prompt", "first", "rubric")
VERDICT_FIELDS = ("kind", "deliberate", "confirm", "decide", "announce")
CRITERION = ("key", "label", "max")


class SpecReader:
    """Reads a whole card into a CardSpec; every problem goes to `problems`."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self.labels: dict[str, tuple[str, int, str]] = {}  # step -> (label, line, field) where first given
        self.option_names: set[str] = set()
        self.option_specs: dict[str, OptionSpec] = {}
        self.seat_keys: set[str] = set()
        self.groups: dict[str, SeatGroup] = {}
        self.speech_steps: set[str] = set()
        self.answers: dict[str, tuple[AnswerSpec, int, str]] = {}  # step -> its answer, where first given
        self.untils: list[tuple[UntilSpec, tuple[Stage, ...]]] = []
        self.side_count = 0
        self.seat_specs: dict[str, SeatSpec] = {}

    # -- the parts ---------------------------------------------------------------------------------------------
    def card(self, data: Any) -> CardSpec | None:
        top = Reader(data, "", self.problems, 1, TOP_FIELDS)
        if not top.ok:
            return None
        name = top.slug("name", pattern=SLUG)
        title = top.text("title", limit=200)
        description = top.text("description", "", limit=2000)
        options, option_lines = self.options(top)
        sides = self.sides(top)
        self.side_count = len(sides)
        seats = self.seats(top, {s.key for s in sides})
        self.seat_specs = {s.key: s for s in seats}
        poll = top.choice("poll", POLLS, "")
        if poll == "sides":
            self.check_sides_poll(top, sides, seats)
        stages = self.stagelisted(top.listing("stages", required=True), "stages", in_repeat=False)
        on_end = self.stagelisted(top.listing("on_end"), "on_end", in_repeat=False)
        judge = self.judge(top.data["judge"], top.line_of("judge"), sides) if top.has("judge") else None
        decision = self.decision(top) if top.has("decision") else None
        return CardSpec(
            name=name,
            title=title,
            description=description,
            options=options,
            seats=seats,
            sides=sides,
            poll=poll,
            stages=stages,
            on_end=on_end,
            judge=judge,
            labels={step: label for step, (label, _, _) in self.labels.items()},
            option_lines=option_lines,
            decision=decision,
            answers={step: answer for step, (answer, _, _) in self.answers.items()},
            groups=tuple(self.groups.values()),
        )

    def check_sides_poll(self, top: Reader, sides: tuple[SideSpec, ...], seats: tuple[SeatSpec, ...]) -> None:
        """The audience votes for one of two sides by its first speaker: two sides, each with a seat."""
        if len(sides) != 2:
            top.problem("poll", "A 'sides' poll needs exactly two sides; with more, use 'people'.")
            return
        empty = [side.key for side in sides if not any(seat.side == side.key for seat in seats)]
        if empty:
            top.problem("poll", f"A 'sides' poll votes for a side's speaker, and side {empty[0]!r} has no seat.")

    def options(self, top: Reader) -> tuple[tuple[OptionSpec, ...], dict[str, int]]:
        if not top.has("options"):
            return (), {}
        data = top.data["options"]
        if not isinstance(data, LMap):
            top.problem("options", "'options' must map each option's name to its label, default, min and max.")
            return (), {}
        specs, lines = [], {}
        for name, spec in data.items():
            path = f"options.{name}"
            line = data.lines[name]
            if not KEY.fullmatch(name):
                self.problems.add(line, path, f"{name!r} is not a valid option name: lower-case letters, digits, _.")
                continue
            reader = Reader(spec, path, self.problems, line, OPTION_FIELDS)
            label = reader.text("label", default_label(name).capitalize(), limit=100)
            low, high = reader.integer("min"), reader.integer("max")
            default = reader.integer("default", low)
            self.option_names.add(name)
            lines[name] = line
            if low is None or high is None or default is None:
                specs.append(OptionSpec(name, label, 0, 0, 0))
                continue
            bad = False
            if low < 0 or high > MAX_OPTION:
                reader.problem(
                    "max" if high > MAX_OPTION else "min", f"An option's bounds must be within 0 to {MAX_OPTION:,}."
                )
                bad = True
            if low > high:
                reader.problem("min", f"The minimum ({low}) is above the maximum ({high}).")
                bad = True
            elif not low <= default <= high:
                reader.problem("default", f"The default ({default}) must be from {low} to {high}.")
                bad = True
            if bad:
                # Kept, within bounds, so the card can still be laid out to find its other problems.
                low, high = sorted((max(low, 0), min(max(high, 0), MAX_OPTION)))
                default = min(max(default, low), high)
            specs.append(OptionSpec(name, label, default, low, high, reader.text("help", "", limit=500)))
        self.option_specs = {o.name: o for o in specs}
        return tuple(specs), lines

    def sides(self, top: Reader) -> tuple[SideSpec, ...]:
        found: list[SideSpec] = []
        items = top.listing("sides")
        for index, item in enumerate(items):
            reader = Reader(item, f"sides[{index + 1}]", self.problems, items.lines[index], SIDE_FIELDS)
            key = reader.slug("key")
            label = reader.text("label", default_label(key).capitalize(), limit=100)
            stance = reader.choice("stance", STANCES, "")
            verdict = reader.text("verdict", "", limit=60)
            if key in {s.key for s in found}:
                reader.problem("key", f"There are two sides called {key!r}.")
                continue
            if verdict and verdict.casefold() in {s.verdict.casefold() for s in found}:
                # An `answer: side` is given by these words where every side has one: each must name one side.
                reader.problem("verdict", f"Two sides' verdicts are {verdict!r}: each side needs a word of its own.")
            found.append(SideSpec(key, label, stance, verdict))
        if len(found) == 1:
            top.problem("sides", "A card has no sides, or at least two.")
        return tuple(found)

    def seats(self, top: Reader, sides: set[str]) -> tuple[SeatSpec, ...]:
        found: list[SeatSpec] = []
        items = top.listing("seats", required=True)
        for index, item in enumerate(items):
            reader = Reader(item, f"seats[{index + 1}]", self.problems, items.lines[index], SEAT_FIELDS)
            key = reader.slug("key")
            role = reader.choice("role", ROLES, "debater")
            side = reader.text("side", "", limit=40)
            if key in RESERVED_SEAT_KEYS or key.startswith(RESERVED_PREFIXES) or key.endswith("_json"):
                reader.problem("key", f"{key!r} is a placeholder's name; call the seat something else.")
            if key in {s.key for s in found} or key in self.groups:
                reader.problem("key", f"There are two seats called {key!r}.")
                continue
            if key in self.option_names:
                reader.problem("key", f"{key!r} is also an option's name: a placeholder names one or the other.")
            if side and side not in sides:
                reader.problem("side", f"There is no side called {side!r}; the sides are {listed(sides) or 'none'}.")
            if role == "debater" and sides and not side:
                reader.problem("side", "A debater needs a side in a card with sides.")
            if role != "debater" and side:
                reader.problem("side", f"A {role} takes no side.")
            label = reader.text("label", default_label(key).capitalize(), limit=100)
            human_allowed = reader.boolean("human_allowed", False)
            if reader.has("count"):
                found += self.group(reader, key, role, label, side, human_allowed, {s.key for s in found})
                continue
            spec = SeatSpec(
                key,
                role,
                label,
                side=side,
                required=reader.boolean("required", True),
                human_allowed=human_allowed,
            )
            found.append(spec)
            self.seat_keys.add(key)
        return tuple(found)

    def group(
        self, reader: Reader, key: str, role: str, label: str, side: str, human_allowed: bool, taken: set[str]
    ) -> list[SeatSpec]:
        """A seat group, `{key: agent, label: Agent, count: agents}`: the seats agent_1 .. agent_N ("Agent 1" ..),
        N the option's value; those up to the option's minimum are required, the rest up to its maximum optional."""
        option = reader.slug("count")
        spec = self.option_specs.get(option)
        if spec is None:
            names = listed(sorted(self.option_names)) or "none"
            reader.problem(
                "count", f"A seat group's count names an option of the card; there is no option {option!r} ({names})."
            )
            return []
        if reader.has("required"):
            reader.problem(
                "required",
                f"A seat group's seats are required up to the minimum of {option!r} ({spec.minimum}) and optional "
                f"up to its maximum ({spec.maximum}); leave 'required' out.",
            )
        if spec.maximum > MAX_GROUP:
            reader.problem(
                "count", f"A seat group has at most {MAX_GROUP} seats; {option!r} goes up to {spec.maximum}."
            )
        seats = [
            SeatSpec(
                f"{key}_{n}",
                role,
                f"{label} {n}",
                side=side,
                required=n <= spec.minimum,
                human_allowed=human_allowed,
            )
            for n in range(1, min(spec.maximum, MAX_GROUP) + 1)
        ]
        for seat in seats:
            if seat.key in taken:
                reader.problem("key", f"The group {key!r} has a seat {seat.key!r}, and so has the card already.")
                return []
        self.groups[key] = SeatGroup(key, option, tuple(s.key for s in seats), reader.line, reader.path)
        self.seat_keys.update(s.key for s in seats)
        return seats

    # -- stages ------------------------------------------------------------------------------------------------
    def stagelisted(self, items: LList, path: str, in_repeat: bool) -> tuple[Stage, ...]:
        stages = []
        for index, item in enumerate(items):
            stage = self.stage(item, f"{path}[{index + 1}]", items.lines[index], in_repeat)
            if stage is not None:
                stages.append(stage)
        return tuple(stages)

    def stage(self, item: Any, path: str, line: int, in_repeat: bool) -> Stage | None:
        # A speech's fields include think and system, so the stage's kind is its first key in this order.
        kind = next((k for k in STAGE_TYPES if isinstance(item, LMap) and k in item), None)
        if kind is None:
            self.problems.add(line, path, f"A stage is a mapping with one of {listed(STAGE_TYPES)}.")
            return None
        if kind == "speech":
            return self.speech(item, path, line, in_repeat)
        if kind in ("plan", "think"):
            return self.private(item, kind, path, line, in_repeat)
        if kind == "system":
            reader = Reader(item, path, self.problems, line, SYSTEM_FIELDS)
            seat = self.seat_ref(reader, "seat", required=False)
            step = reader.slug("step", "system")
            self.label(step, None, reader)
            return SystemStage(
                seat=seat or None,
                step=step,
                text=reader.template("system", "call", in_repeat, required=True),
                status=reader.template("status", "call", in_repeat),
                shown=reader.text("shown", "", limit=500),
                line=line,
                field=path,
            )
        if kind == "cross":
            return self.cross(item, path, line, in_repeat)
        reader = Reader(item, path, self.problems, line, REPEAT_FIELDS)
        if in_repeat:
            reader.problem("repeat", "A repeat cannot hold another repeat.")
        times = self.count(reader, "repeat")
        stages = self.stagelisted(reader.listing("stages", required=True), f"{path}.stages", in_repeat=True)
        until = self.until(reader, stages) if reader.has("until") else None
        return RepeatStage(times=times, stages=stages, line=line, field=path, until=until)

    def until(self, repeat: Reader, stages: tuple[Stage, ...]) -> UntilSpec | None:
        """A repeat's stop condition: `agree: all` (or a share from 0.5 to 1) over an answering speech's answers
        in the round, or a seat's yes/no check (`seat`, `prompt`) after each round."""
        reader = Reader(
            repeat.data["until"], repeat.field("until"), self.problems, repeat.line_of("until"), UNTIL_FIELDS
        )
        if not reader.ok:
            return None
        answering = [s for s in stages if isinstance(s, SpeechStage) and s.answer is not None]
        agree: float | None = None
        step = seat = ""
        prompt = EMPTY
        if reader.has("agree") == reader.has("seat"):
            reader.problem("agree", "'until' is either 'agree' (the answers agree) or 'seat' and 'prompt' (a check).")
            return None
        if reader.has("agree"):
            value = reader.data["agree"]
            if value == "all":
                agree = 1.0
            elif isinstance(value, int | float) and not isinstance(value, bool) and 0.5 <= value <= 1:
                agree = float(value)
            else:
                reader.problem("agree", "'agree' is 'all' or the share of answers that must agree, from 0.5 to 1.")
                agree = 1.0
            names = [s.base.speech.step for s in answering]
            step = reader.slug("step", names[-1] if names else "")
            if not names:
                reader.problem("agree", "The answers must agree, but no speech in this repeat gives an answer.")
            elif step not in names:
                reader.problem("step", f"No speech in this repeat that gives an answer is called {step!r}.")
            elif sum(len(s.seats) if s.at_once else 1 for s in answering if s.base.speech.step == step) == 1:
                # One answer a round always agrees with itself: the rounds would stop after the first.
                reader.problem(
                    "agree",
                    f"The answers of {step!r} cannot agree: a round gives one of them (a list of seats speaks one "
                    "speech a round, by the next seat in turn). For every seat to answer in every round, give the "
                    "speech 'at_once: true', or each seat a speech of its own in the repeat.",
                )
            for key in ("prompt", "sees"):
                if reader.has(key):
                    reader.problem(key, f"'{key}' belongs to a seat's check, not to 'agree'.")
        else:
            seat = self.seat_ref(reader, "seat")
            prompt = reader.template("prompt", "check", True, required=True)
        spec = UntilSpec(
            agree=agree,
            step=step,
            seat=seat,
            prompt=prompt,
            sees=reader.choice("sees", SEES, "all"),
            line=reader.line,
            field=reader.path,
        )
        self.untils.append((spec, stages))
        return spec

    def answer(self, reader: Reader, step: str) -> AnswerSpec | None:
        """`answer: number`, `text`, `side` (one of the debate's sides, by the name its verdict gives it), a list
        of choices (one of them), or `{choices: [...], pick: one | some | ranking}`."""
        value = reader.data["answer"]
        kinds = "'number', 'text', 'side', a list of choices, or choices with 'pick'"
        if isinstance(value, str):
            if value not in ("number", "text", "side"):
                reader.problem("answer", f"An answer is {kinds}, not {value!r}.")
                return None
            if value == "side" and self.side_count < 2:
                reader.problem("answer", "An answer 'side' names one of the card's sides, so it needs two or more.")
            spec = AnswerSpec(value)
        else:
            pick = "one"
            if isinstance(value, LMap):
                sub = Reader(value, reader.field("answer"), self.problems, reader.line_of("answer"), ANSWER_FIELDS)
                pick = sub.choice("pick", ("one", "some", "ranking"), "one")
                value = value.get("choices")
            if not (isinstance(value, LList) and value and all(isinstance(c, str | int) for c in value)):
                reader.problem("answer", f"An answer is {kinds}; its choices are a list of texts.")
                return None
            choices = tuple(str(c) for c in value)
            if len(set(choices)) != len(choices):
                reader.problem("answer", "An answer's choices must differ.")
            if not 2 <= len(choices) <= MAX_CHOICES or any(not c or len(c) > MAX_CHOICE for c in choices):
                reader.problem(
                    "answer", f"An answer has 2 to {MAX_CHOICES} choices, each of 1 to {MAX_CHOICE} characters."
                )
            spec = AnswerSpec({"one": "choice", "some": "some", "ranking": "ranking"}[pick], choices)
        known = self.answers.get(step)
        if known is None:
            self.answers[step] = (spec, reader.line_of("answer"), reader.field("answer"))
        elif known[0] != spec:
            reader.problem("answer", f"The step {step!r} gives another answer on line {known[1]}; give it one answer.")
        return spec

    def decision(self, top: Reader) -> DecisionSpec | None:
        reader = Reader(top.data["decision"], "decision", self.problems, top.line_of("decision"), DECISION_FIELDS)
        if not reader.ok:
            return None
        rule = reader.choice("rule", RULES, "plurality")
        tie = reader.choice("tie", TIES, "none")
        seat = self.seat_ref(reader, "seat", required=rule == "judge")
        if seat and rule != "judge":
            reader.problem("seat", "Only the rule 'judge' names a seat: the other rules count every seat's answer.")
        steps = list(self.answers)
        step = reader.slug("step", steps[-1] if steps else "")
        if not steps:
            reader.problem("rule", "A decision counts answers, but no speech of the card gives one.")
            return None
        if step not in self.answers:
            reader.problem("step", f"No speech that gives an answer is called {step!r}; those are {listed(steps)}.")
            return None
        kind = self.answers[step][0].kind
        if kind not in RULE_KINDS[rule]:
            allowed = listed(k for k in ANSWER_KINDS if k in RULE_KINDS[rule])
            reader.problem("rule", f"The rule {rule!r} counts answers of the kind {allowed}; {step!r} gives {kind}.")
        return DecisionSpec(rule=rule, step=step, seat=seat, tie=tie, line=reader.line, field=reader.path)

    def speech(self, item: LMap, path: str, line: int, in_repeat: bool) -> SpeechStage:
        reader = Reader(item, path, self.problems, line, (*SPEECH_FIELDS, *VARIANTS))
        at_once = reader.boolean("at_once", False)
        seats = self.seats_of(reader, "seat", in_repeat or at_once or reader.has("by"))
        step = reader.slug("speech")
        self.speech_steps.add(step)
        when = self.when(reader) if reader.has("when") else None
        by = self.when(reader, "by") if reader.has("by") else None
        if by is not None and at_once:
            reader.problem("by", "A speech by the first seat to answer is one speech: it cannot be given at once.")
        answer = self.answer(reader, step) if reader.has("answer") else None
        first_template = len(self.problems.templates)
        base = self.variant(reader, step, in_repeat, None, seats)
        variants: dict[str, SpeechVariant] = {}
        for key in VARIANTS:
            if reader.has(key):
                if not in_repeat:
                    reader.problem(key, f"'{key}' only means something inside a repeat.")
                sub = Reader(item[key], reader.field(key), self.problems, reader.line_of(key), VARIANT_FIELDS)
                variant = self.variant(sub, sub.slug("step", step), in_repeat, base, seats)
                self.speech_steps.add(variant.speech.step)
                if answer is not None and variant.speech.step != step:
                    self.answers.setdefault(variant.speech.step, self.answers[step])
                variants[key] = variant
        if answer is not None:
            templates = self.problems.templates
            templates[first_template:] = [(*entry[:5], True) for entry in templates[first_template:]]
        if at_once and any(v.system is not None for v in (base, *variants.values())):
            reader.problem("at_once", "Speeches given at once have no system line of their own: put one before them.")
        return SpeechStage(
            seats=seats,
            base=base,
            first=variants.get("first"),
            final=variants.get("final"),
            last=variants.get("last"),
            sees=reader.choice("sees", SEES, "own"),
            word_limit=self.count(reader, "word_limit", required=False),
            shown=reader.text("shown", "", limit=500),
            line=line,
            field=path,
            at_once=at_once,
            answer=answer,
            when=when,
            by=by,
        )

    def when(self, speech: Reader, name: str = "when") -> WhenSpec | None:
        """`when: {step: S, answer: A}` (or `not: A`; A one choice or a list): S an earlier speech with choices.
        `by` reads the same way."""
        reader = Reader(speech.data[name], speech.field(name), self.problems, speech.line_of(name), WHEN_FIELDS)
        if not reader.ok:
            return None
        step = reader.slug("step")
        if reader.has("answer") == reader.has("not"):
            reader.problem("answer", "Say the answers it runs on ('answer') or those it does not run on ('not'), one.")
            return None
        key = "answer" if reader.has("answer") else "not"
        given = self.answers.get(step)
        choosing = [s for s, (a, _, _) in self.answers.items() if a.kind == "choice"]
        if given is None or given[0].kind != "choice":
            reader.problem(
                "step",
                f"A speech runs on the answer of an earlier speech with choices; {step!r} is none"
                + (f" (those are {listed(choosing)})." if choosing else ": no speech before it gives one."),
            )
            return None
        value = reader.data[key]
        answers = tuple(str(v) for v in value) if isinstance(value, LList) else (str(value),)
        unknown = [a for a in answers if a not in given[0].choices]
        if unknown or not answers:
            reader.problem(key, f"{step!r} answers {listed(given[0].choices)}, not {listed(unknown) or 'nothing'}.")
            return None
        return WhenSpec(step, answers, key == "not", reader.line, reader.path)

    def variant(
        self, reader: Reader, step: str, in_repeat: bool, base: SpeechVariant | None, seats: tuple[str, ...]
    ) -> SpeechVariant:
        system = reader.template("system", "call", in_repeat) if reader.has("system") else None
        by_seat: tuple[tuple[str, Template], ...] = ()
        if isinstance(reader.data.get("prompt"), LMap):
            prompt, by_seat = self.seat_prompts(reader, in_repeat, seats)
        else:
            prompt = reader.template("prompt", "call", in_repeat)
        if base is not None:
            system = system if reader.has("system") else base.system
            if not reader.has("prompt"):
                prompt, by_seat = base.speech.prompt, base.by_seat
        if not prompt and not by_seat and not system:
            reader.problem("prompt", "A speech needs a prompt, or a system line that is its instruction.")
        label = self.label(step, None, reader)
        think = base.think if base is not None and not reader.has("think") else None
        if reader.has("think"):
            think = self.call(
                reader.data["think"], reader.field("think"), reader.line_of("think"), "think", "call", in_repeat
            )
        status = reader.template("status", "call", in_repeat) if reader.has("status") or base is None else base.status
        return SpeechVariant(
            speech=Call(step, label, prompt, reader.line_of("prompt"), reader.field("prompt")),
            think=think,
            system=system,
            status=status,
            by_seat=by_seat,
        )

    def seat_prompts(
        self, reader: Reader, in_repeat: bool, seats: tuple[str, ...]
    ) -> tuple[Template, tuple[tuple[str, Template], ...]]:
        """`prompt: {<seat, group or side>: ..., other: ...}`: a prompt for each seat of the speech, so seats that
        speak at once, or take turns in a repeat, can be asked differently (an affirmative and a negative). Every
        seat must find one; a key that names none of the speech's seats is a problem."""
        names = {seat: seat_names(seat, self.seat_specs.values(), self.groups.values()) for seat in seats}
        keys = (*dict.fromkeys(k for found in names.values() for k in found if k != "other"), "other")
        sub = Reader(reader.data["prompt"], reader.field("prompt"), self.problems, reader.line_of("prompt"), keys)
        given = tuple((key, sub.template(key, "call", in_repeat, True)) for key in sub.data if key in keys)
        missing = [seat for seat, found in names.items() if not any(k in sub.data for k in found)]
        if missing and seats:
            labels = listed(f"{self.seat_specs[s].label} ({s})" if s in self.seat_specs else s for s in missing)
            reader.problem(
                "prompt",
                f"No prompt for {labels}: give each seat a prompt by its key, its group's, its side's, or 'other'.",
            )
        return dict(given).get("other", EMPTY), given

    def private(self, item: LMap, kind: str, path: str, line: int, in_repeat: bool) -> PrivateStage:
        reader = Reader(item, path, self.problems, line, (kind, *PRIVATE_FIELDS))
        step = reader.slug(kind)
        seats = self.seats_of(reader, "seat", in_repeat=False, cycle=False)
        return PrivateStage(
            kind="PLAN" if kind == "plan" else "THINK",
            seats=seats,
            call=Call(
                step,
                self.label(step, None, reader),
                reader.template("prompt", "call", in_repeat, True),
                reader.line_of("prompt"),
                reader.field("prompt"),
            ),
            sees=reader.choice("sees", SEES, "own"),
            line=line,
            field=path,
        )

    def cross(self, item: LMap, path: str, line: int, in_repeat: bool) -> CrossStage:
        reader = Reader(item, path, self.problems, line, CROSS_FIELDS)
        step = reader.slug("cross")
        label = self.label(step, None, reader)
        # A cross-examination's label names its questions and answers, unless they have labels of their own.
        named = (f"{label}, question", f"{label}, answer") if reader.has("label") else (None, None)
        asker = self.seats_of(reader, "asker", in_repeat)
        answerer = self.seats_of(reader, "answerer", in_repeat)
        if asker and answerer:
            # Round r pairs the r-th asker with the r-th answerer, each list taken in turn.
            pairs = math.lcm(len(asker), len(answerer))
            if any(asker[r % len(asker)] == answerer[r % len(answerer)] for r in range(pairs)):
                reader.problem("answerer", "A seat cannot answer its own questions.")
        question = self.call(
            reader.data.get("question"),
            reader.field("question"),
            reader.line_of("question"),
            "question",
            "question",
            in_repeat,
            named[0],
        )
        answer = self.call(
            reader.data.get("answer"),
            reader.field("answer"),
            reader.line_of("answer"),
            "answer",
            "answer",
            in_repeat,
            named[1],
        )
        self.speech_steps.update((question.step, answer.step))
        return CrossStage(
            asker=asker,
            answerer=answerer,
            exchanges=self.count(reader, "exchanges", default=1),
            question=question,
            answer=answer,
            sees=reader.choice("sees", SEES, "own"),
            word_limit=self.count(reader, "word_limit", required=False),
            line=line,
            field=path,
        )

    # -- the judge ---------------------------------------------------------------------------------------------
    def judge(self, data: Any, line: int, sides: tuple[SideSpec, ...]) -> JudgeSpec:
        reader = Reader(data, "judge", self.problems, line, JUDGE_FIELDS)
        seat = self.seat_ref(reader, "seat")
        sees = reader.choice("sees", SEES, "own")
        evaluate = score = score_first = None
        score_rubric: tuple[Criterion, ...] = ()
        after: frozenset[str] | None = None
        if reader.has("score"):
            sub = Reader(reader.data["score"], "judge.score", self.problems, reader.line_of("score"), SCORE_FIELDS)
            if sub.has("after"):
                value = sub.data["after"]
                if value == "all":
                    after = None
                elif isinstance(value, LList) and all(isinstance(v, str) for v in value) and value:
                    after = frozenset(value)
                else:
                    sub.problem("after", "'after' is 'all' or a list of the speech steps the judge scores.")
            if sub.has("evaluate"):
                evaluate = self.call(
                    sub.data["evaluate"], sub.field("evaluate"), sub.line_of("evaluate"), "evaluate", "score", False
                )
            step = sub.slug("step", "score")
            score = Call(
                step,
                self.label(step, None, sub),
                sub.template("prompt", "score", False, True),
                sub.line_of("prompt"),
                sub.field("prompt"),
            )
            if sub.has("first"):
                score_first = self.call(
                    sub.data["first"], sub.field("first"), sub.line_of("first"), step, "score", False
                )
            self.after = (after, sub)
            score_rubric = self.rubric(sub)
        deliberate = confirm = decide = announce = None
        ranking = len(sides) > 2
        if reader.has("verdict"):
            sub = Reader(
                reader.data["verdict"], "judge.verdict", self.problems, reader.line_of("verdict"), VERDICT_FIELDS
            )
            kind = sub.choice("kind", ("winner", "ranking"), "ranking" if ranking else "winner")
            ranking = kind == "ranking"
            if len(sides) < 2:
                sub.problem("kind", "A verdict names a winner among the sides: the card needs at least two sides.")
            elif not ranking and len(sides) > 2:
                sub.problem("kind", "A winner is named among two sides; with more, the verdict is a ranking.")
            parts = {}
            for key, step, context in (
                ("deliberate", "deliberate", "verdict"),
                ("confirm", "confirm_winner", "verdict"),
                ("decide", "verdict_json", "decide"),
                ("announce", "announce", "verdict"),
            ):
                if sub.has(key):
                    parts[key] = self.call(sub.data[key], sub.field(key), sub.line_of(key), step, context, False)
            if "decide" not in parts:
                sub.problem("decide", "A verdict needs 'decide': the prompt asking for the verdict as JSON.")
            if ranking and "confirm" in parts:
                sub.problem("confirm", "A ranking names no single winner to confirm; leave 'confirm' out.")
            deliberate, confirm = parts.get("deliberate"), parts.get("confirm")
            decide, announce = parts.get("decide"), parts.get("announce")
        if score is None and decide is None:
            reader.problem("seat", "The judge has nothing to judge: give it 'score', 'verdict' or both.")
        return JudgeSpec(
            seat=seat,
            sees=sees,
            after=after,
            evaluate=evaluate,
            score=score,
            score_first=score_first,
            deliberate=deliberate,
            confirm=confirm,
            decide=decide,
            announce=announce,
            ranking=ranking,
            rubric=self.rubric(reader),
            line=line,
            score_rubric=score_rubric,
        )

    def rubric(self, reader: Reader) -> tuple[Criterion, ...]:
        found: list[Criterion] = []
        items = reader.listing("rubric")
        for index, item in enumerate(items):
            sub = Reader(item, f"{reader.field('rubric')}[{index + 1}]", self.problems, items.lines[index], CRITERION)
            key = sub.slug("key")
            maximum = sub.integer("max", 10) or 0
            if not 1 <= maximum <= 100:
                sub.problem("max", "A criterion's maximum must be from 1 to 100.")
            if key in {c.key for c in found}:
                sub.problem("key", f"There are two criteria called {key!r}.")
                continue
            found.append(Criterion(key, sub.text("label", default_label(key).capitalize(), limit=100), maximum))
        return tuple(found)

    # -- small parts -------------------------------------------------------------------------------------------
    def call(
        self, data: Any, path: str, line: int, step: str, context: str, in_repeat: bool, label: str | None = None
    ) -> Call:
        """A call given as its prompt alone, or as a mapping of step, label and prompt. Its label is by default
        `label` where it has a step of its own (a default step, "question", is every cross-examination's), else its
        step's name in words."""
        if isinstance(data, str):
            data = LMap({"prompt": data})
            data.line, data.lines = line, {"prompt": line}
        reader = Reader(data, path, self.problems, line, CALL_FIELDS)
        name = reader.slug("step", step)
        return Call(
            name,
            self.label(name, label if reader.has("step") else None, reader),
            reader.template("prompt", context, in_repeat, True),
            reader.line_of("prompt"),
            reader.field("prompt"),
        )

    def label(self, step: str, default: str | None, reader: Reader) -> str:
        known = self.labels.get(step)
        if known is not None and not reader.has("label"):
            return known[0]
        label = reader.text("label", default_label(step) if default is None else default, limit=100)
        if known is None:
            self.labels[step] = (label, reader.line_of("label"), reader.field("label"))
        elif reader.has("label") and known[0] != label:
            variant = reader.path.rsplit(".", 1)[-1]
            # A first, final or last round without a step of its own is the speech's step, so it keeps its label.
            own = (
                f", or give this '{variant}' a step of its own"
                if variant in VARIANTS and not reader.has("step")
                else ""
            )
            reader.problem(
                "label", f"The step {step!r} is labelled {known[0]!r} on line {known[1]}; give it one label{own}."
            )
        return label

    def seat_ref(self, reader: Reader, key: str, required: bool = True) -> str:
        seat = reader.text(key, None if required else "", limit=40)
        if seat in self.groups:
            seats = listed(self.groups[seat].seats)
            reader.problem(key, f"{seat!r} is a group of seats; here name one of them ({seats}).")
        elif seat:
            self.pending_seats.append((seat, reader.line_of(key), reader.field(key)))
        return seat

    def seats_of(self, reader: Reader, key: str, in_repeat: bool, cycle: bool = True) -> tuple[str, ...]:
        value = reader.data.get(key)
        if isinstance(value, str) and value in self.groups:
            value = LList([value])
        if isinstance(value, LList) and value and all(isinstance(v, str) for v in value):
            # A seat group names every seat of it, in order.
            value = [s for v in value for s in (self.groups[v].seats if v in self.groups else (v,))]
            if len(value) > 1 and cycle and not in_repeat:
                reader.problem(key, "Several seats take turns only inside a repeat; outside one, give one seat.")
            for seat in value:
                self.pending_seats.append((seat, reader.line_of(key), reader.field(key)))
            return tuple(value)
        if isinstance(value, str):
            self.pending_seats.append((value, reader.line_of(key), reader.field(key)))
            return (value,)
        reader.problem(key, f"{key!r} must name a seat, or list seats.")
        return ()

    def count(self, reader: Reader, key: str, default: int | None = None, required: bool = True) -> Count | None:
        if not reader.has(key):
            if required and default is None:
                reader.problem(key, f"{key!r} is required: a number or an option's name.")
            return default
        value = reader.data[key]
        if isinstance(value, bool) or not isinstance(value, int | str):
            reader.problem(key, f"{key!r} must be a number or an option's name.")
            return default
        if isinstance(value, int) and not 0 <= value <= MAX_OPTION:
            reader.problem(key, f"{key!r} must be from 0 to {MAX_OPTION:,}.")
            return default
        if isinstance(value, str):
            self.pending_options.append((value, reader.line_of(key), reader.field(key)))
        return value

    pending_seats: list[tuple[str, int, str]]
    pending_options: list[tuple[str, int, str]]
    after: tuple[frozenset[str] | None, Reader] | None = None

    # Whether the card can be laid out to look for the problems only its layout shows (every count it repeats
    # by names an option it has).
    layable = True

    def read(self, data: Any) -> CardSpec | None:
        self.pending_seats, self.pending_options = [], []
        spec = self.card(data)
        if spec is None:
            return None
        for seat, line, path in self.pending_seats:
            if seat not in self.seat_keys:
                self.problems.add(
                    line, path, f"There is no seat called {seat!r}; the seats are {listed(sorted(self.seat_keys))}."
                )
        for option, line, path in self.pending_options:
            if option not in self.option_names:
                self.layable = False
                names = listed(sorted(self.option_names)) or "none"
                self.problems.add(line, path, f"There is no option called {option!r}; the options are {names}.")
        if spec.judge is not None:
            self.check_judge(spec)
        self.check_placeholders(spec)
        return spec

    def check_judge(self, spec: CardSpec) -> None:
        judge = spec.judge
        assert judge is not None
        roles = {s.key: s.role for s in spec.seats}
        if judge.seat in roles and roles[judge.seat] != "judge":
            self.problems.add(
                judge.line,
                "judge.seat",
                f"The judge's seat {judge.seat!r} has the role {roles[judge.seat]!r}, not judge.",
            )
        if self.after is not None and self.after[0] is not None:
            unknown = sorted(self.after[0] - self.speech_steps)
            if unknown:
                self.after[1].problem(
                    "after",
                    f"No speech is called {listed(unknown)}; the speeches are {listed(sorted(self.speech_steps))}.",
                )

    def check_placeholders(self, spec: CardSpec) -> None:
        steps = set(self.labels)
        two_sides = len(spec.sides) == 2
        seat_names = {s.key for s in spec.seats}
        for template, context, in_repeat, line, path, answer in self.problems.templates:
            for name in sorted(template.names - self.option_names):
                why = placeholder_problem(name, context, in_repeat, steps, seat_names, two_sides, answer)
                if why:
                    self.problems.add(line, path, why)
        for until, stages in self.untils:
            if until.seat and not any(isinstance(s, SpeechStage | CrossStage) for s in stages):
                self.problems.add(until.line, until.field, "A check after each round needs a speech in the repeat.")


def placeholder_problem(
    name: str,
    context: str,
    in_repeat: bool,
    steps: set[str],
    seats: set[str],
    two_sides: bool,
    answer: bool = False,
) -> str | None:
    """Why `{name}` cannot be used in a template of this context, or None if it can (placeholders.TABLE)."""
    row = placeholders.BY_NAME.get(name)
    if name in seats and (row is None or not row.reserves_seat):
        return None  # a seat's name; a placeholder added after the seat was named yields to it
    if name.endswith("_json") and name[:-5] in seats:
        return None
    if row is not None and context in row.where:
        if row.needs_two_sides and not two_sides:
            return "{opponent} names the other side, so it needs a card with exactly two sides; use {opponents}."
        if row.in_repeat and not in_repeat:
            return f"{{{name}}} is only known inside a repeat."
        if row.needs_answer and not answer:
            return f"{{{name}}} tells a speech how to give its answer, so it is known only in a speech with 'answer'."
        return None
    for prefix in placeholders.REFERENCE_PREFIXES:
        if name.startswith(prefix):
            step = name[len(prefix) :]
            if step in steps:
                return None
            return f"{{{name}}} reads the step {step!r}, but no stage of the card is called that."
    here = placeholders.known(context, in_repeat, answer, seats)
    return (
        f"Unknown placeholder {{{name}}}. Here you may use {listed('{' + n + '}' for n in here)}, a seat's key "
        "(its speaker's name), an option's name (its value), and own_, team_, opponent_, last_ or others_ followed "
        "by a step's name."
    )
