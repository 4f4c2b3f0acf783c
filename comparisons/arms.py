"""A comparison's arms: the protocols whose outcome carries an answer (a card with a `decision`), who sits in each
seat, their options, and what each costs in calls. One selector (`answering_formats`) offers the arms to the form,
the spec file and the API alike."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from batches.checks import Checks, Contestant
from debates import format_cards
from debates.formats import Format, FormatError
from debates.formats.base import SeatSpec
from debates.formats.card.format import CardFormat

# The baselines every comparison is measured against: one agent alone, and a majority of independent agents.
BASELINES = ("single-agent", "self-consistency")
MAX_ARMS = 8
MAX_ARM_NAME = 60


def gives_answer(fmt: Format) -> bool:
    """Whether a debate of `fmt` ends with an answer to grade (a card's decision over its seats' answers)."""
    return getattr(fmt, "decision_spec", None) is not None


def answering_formats(user: Any) -> list[Format]:
    """The formats `user` may make an arm of: those whose outcome carries an answer, the baselines first."""
    found = [f for f in format_cards.formats_for(user) if gives_answer(f)]
    return sorted(found, key=lambda f: (f.name not in BASELINES, BASELINES.index(f.name) if f.name in BASELINES else 0))


@dataclass(frozen=True)
class ArmRequest:
    """An arm as asked for: its format's name, the persona in every seat (`persona`), how many agents sit (the
    format's required seats at least; None: its required seats), a persona for particular seats, its options."""

    format: str
    persona: Contestant | None
    name: str = ""
    agents: int | None = None
    personas: Mapping[str, Contestant] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Arm:
    """An arm as it runs: its format (and the card's text), who sits where, its options."""

    name: str
    fmt: Format
    card_source: str
    seats: dict[str, Contestant]
    options: dict[str, int]

    def calls(self) -> tuple[int, int]:
        """The fewest and the most model calls of one of its debates (a stop condition may end it early)."""
        return calls_of(self.fmt, self.options, self.seats)

    def rounds_cap(self) -> int | None:
        """The most rounds its debates may run, when a stop condition may end them sooner; else None."""
        return rounds_cap(self.fmt, self.options)

    def stored(self) -> dict[str, Any]:
        """As `Comparison.arms` holds it."""
        return {
            "name": self.name,
            "format": self.fmt.name,
            "card_source": self.card_source,
            "options": self.options,
            "seats": {key: c.spec.to_dict() for key, c in self.seats.items()},
            "personas": {key: c.persona.pk if c.persona else None for key, c in self.seats.items()},
        }


def calls_of(fmt: Format, options: Mapping[str, Any], seats: Mapping[str, Any]) -> tuple[int, int]:
    """(fewest, most) calls of one debate of `fmt` with `seats` filled: a card counts only the calls of the seats
    that sit (an optional seat left empty speaks no turn)."""
    if not isinstance(fmt, CardFormat):
        return fmt.fewest_calls(options), fmt.calls(options)
    slots = [s for s in fmt.layout(options).slots if s.kind != "SYSTEM" and s.phase != "end"]
    slots = [s for s in slots if s.seat is None or s.seat in seats]
    return sum(1 for s in slots if not (s.repeat and s.round > 1)), len(slots)


def rounds_cap(fmt: Format, options: Mapping[str, Any]) -> int | None:
    if not isinstance(fmt, CardFormat) or not fmt.untils or "rounds" not in {o.name for o in fmt.option_specs}:
        return None
    return fmt.value(options, "rounds")


def _renamed(contestant: Contestant, label: str) -> Contestant:
    """The persona under a seat's own name: a debate tells its speakers apart by name, so one model in several seats
    sits as "Ada (Agent 1)", "Ada (Agent 2)"."""
    name = f"{contestant.spec.name} ({label})"[:100]
    return Contestant(spec=dataclasses.replace(contestant.spec, name=name), persona=contestant.persona)


def resolve(
    owner: Any, requests: Sequence[ArmRequest], found: Checks, numbers: Sequence[int] | None = None
) -> list[Arm]:
    """The arms that resolve, every problem with them told to `found` (each naming its arm, on the spec's `arms`): a
    format that is not there or gives no answer, a seat it has not, one left empty, an option it has not or out of
    its bounds, two arms of one name. Each arm is named by its place among `requests`, or by its `numbers` (the
    form's rows, some left empty)."""
    arms: list[Arm] = []
    if not requests:
        found.fail("A comparison needs at least one arm.", "arms")
    if len(requests) > MAX_ARMS:
        found.fail(f"A comparison takes at most {MAX_ARMS} arms, not {len(requests)}.", "arms")
    names: list[str] = []
    for number, request in zip(numbers or range(1, len(requests) + 1), requests, strict=True):
        where = f"arm {number} ({request.name or request.format})"
        try:
            resolved = format_cards.resolve(owner, request.format)
        except FormatError as error:
            found.fail(f"{where}: {error}", "arms")
            continue
        fmt = resolved.fmt
        if not gives_answer(fmt):
            offered = ", ".join(f.name for f in answering_formats(owner))
            found.fail(f"{where}: {fmt.title} decides no answer; the formats that do are {offered}.", "arms")
            continue
        problems: list[str] = []
        group_options: dict[str, int] = {}
        seats = _seats(fmt, request, problems, group_options)
        options = {**_options(fmt, request.options, problems), **group_options}
        name = (request.name or fmt.name).strip()
        if len(name) > MAX_ARM_NAME:
            problems.append(f"its name may be at most {MAX_ARM_NAME} characters")
        names.append(name)
        for problem in problems:
            found.fail(f"{where}: {problem}", "arms")
        if not problems:
            arms.append(Arm(name, fmt, resolved.card_source, seats, options))
    for repeated in sorted({n for n in names if names.count(n) > 1}):
        found.fail(f"Two arms are named {repeated!r}: give each a name of its own (name: ...).", "arms")
    return arms


def _seats(
    fmt: Format, request: ArmRequest, problems: list[str], group_options: dict[str, int]
) -> dict[str, Contestant]:
    """Who sits where. A card with one seat group seats `agents` of it by setting the group's option (into
    `group_options`); any other format seats its required seats and `agents` less them of its optional ones."""
    specs = fmt.seat_specs
    known = {s.key for s in specs}
    problems += [
        f"it has no seat {key!r}; its seats are {', '.join(sorted(known))}"
        for key in request.personas
        if key not in known
    ]
    groups = fmt.spec.groups if isinstance(fmt, CardFormat) else ()
    if len(groups) == 1:
        sitting = _group_seats(fmt, request, problems, group_options)
    else:
        required = [s for s in specs if s.required]
        optional = [s for s in specs if not s.required]
        agents = len(required) if request.agents is None else request.agents
        if not len(required) <= agents <= len(specs):
            problems.append(f"agents: {fmt.title} seats {len(required)} to {len(specs)} agents, not {agents}")
            agents = len(required)
        sitting = [*required, *optional[: agents - len(required)]]
        sitting += [s for s in optional if s.key in request.personas and s not in sitting]
    seats: dict[str, Contestant] = {}
    for spec in sitting:
        chosen = request.personas.get(spec.key, request.persona)
        if chosen is None:
            problems.append(f"the {spec.label} seat has no persona (give persona: or personas: {{{spec.key}: ...}})")
            continue
        seats[spec.key] = chosen
    counts = [c.spec.name for c in seats.values()]
    labels = {s.key: s.label for s in specs}
    return {key: _renamed(c, labels[key]) if counts.count(c.spec.name) > 1 else c for key, c in seats.items()}


def _group_seats(
    fmt: CardFormat, request: ArmRequest, problems: list[str], group_options: dict[str, int]
) -> list[SeatSpec]:
    """A card's seat group: `agents` is its option's value (or the option as given, or its default); the seats are
    those a debate at that value has, and a persona for a seat past it is a problem."""
    group = fmt.spec.groups[0]
    option = next(o for o in fmt.option_specs if o.name == group.option)
    given = request.options.get(option.name)
    agents = request.agents
    if agents is None:
        agents = given if isinstance(given, int) and not isinstance(given, bool) else option.default
    elif given is not None and given != agents:
        problems.append(f"agents: {agents}, but options give {option.name}: {given!r}; give one of them")
    if not option.minimum <= agents <= option.maximum:
        problems.append(f"agents: {fmt.title} seats {option.minimum} to {option.maximum} agents, not {agents}")
        agents = option.default
    group_options[option.name] = agents
    labels = {s.key: s.label for s in fmt.seat_specs}
    past = [key for key in group.seats[agents:] if key in request.personas]
    if past:
        problems.append(
            f"it seats {agents} agents, so it has no {', '.join(labels[k] for k in past)} seat (set agents: "
            f"{group.seats.index(past[-1]) + 1})"
        )
    return list(fmt.seats_for({option.name: agents}))


def _options(fmt: Format, given: Mapping[str, Any], problems: list[str]) -> dict[str, int]:
    specs = {o.name: o for o in fmt.option_specs}
    out: dict[str, int] = {}
    for name, value in given.items():
        spec = specs.get(name)
        if spec is None:
            has = ", ".join(specs) or "none"
            problems.append(f"it has no option {name!r} (its options: {has})")
        elif isinstance(value, bool) or not isinstance(value, int) or not spec.minimum <= value <= spec.maximum:
            problems.append(f"{name}: a whole number from {spec.minimum} to {spec.maximum}, not {value!r}")
        else:
            out[name] = value
    return out
