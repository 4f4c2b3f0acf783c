"""Creating a debate: who sits where, snapshotted from personas, checked by the format."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from debates import hold
from debates.formats import DebateConfig, Format, FormatError, SeatInfo, get_format
from debates.formats.base import seat_empty
from debates.models import Debate, Seat
from personas.calls import LLMSettings, UnknownProvider
from personas.models import Persona
from personas.yaml_io import PersonaSpec

HUMAN = "human"


@dataclass(frozen=True)
class SeatChoice:
    """A seat's occupant: a stored persona, a persona from a YAML file, or the human owner."""

    persona: Persona | None = None
    spec: PersonaSpec | None = None
    human_name: str = ""

    @property
    def is_human(self) -> bool:
        return self.persona is None and self.spec is None

    def resolved_spec(self) -> PersonaSpec | None:
        if self.persona is not None:
            return self.persona.spec()
        return self.spec


def repeated_names(seats: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each seat (its key) whose occupant's name an earlier seat's has, with that earlier seat's key.

    Each seat needs a different persona: the transcript, and every prompt that quotes it, tells speakers apart by
    name. `seats`: (key, name) in seating order."""
    first: dict[str, str] = {}
    repeats: dict[str, str] = {}
    for key, name in seats:
        if name in first:
            repeats[key] = first[name]
        else:
            first[name] = key
    return repeats


def clean_material(text: str) -> str:
    """A debate's material as it is stored: its line ends as "\n" (a browser's textarea sends "\r\n"), and no blank
    lines or spaces around it."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def material_refusal(text: str) -> str:
    """Why `text` (cleaned) cannot be a debate's material, or "": the one bound the form, the API and the command
    line share (CHAOSLM_MAX_MATERIAL)."""
    limit = settings.CHAOSLM_MAX_MATERIAL
    if len(text) > limit:
        return f"The material may be at most {limit:,} characters; this is {len(text):,}."
    return ""


def _llm_snapshot(choice: SeatChoice, spec: PersonaSpec) -> dict[str, Any]:
    provider_id = choice.persona.provider_id if choice.persona is not None else None
    return LLMSettings.of_spec(spec, provider_id=provider_id).to_json()


@dataclass(frozen=True)
class _Checked:
    """A new debate as `checked` reads it: what it stores, and every problem that keeps it from being made."""

    fmt: Format
    fields: dict[str, Any]
    rows: list[Seat]
    problems: list[str]


def _checked(
    *,
    format_name: str,
    topic: str,
    premise: str,
    material: str,
    seats: dict[str, SeatChoice],
    options: dict[str, Any] | None,
    hold_minutes: int,
    card_source: str,
) -> _Checked:
    fmt = get_format(format_name, card_source)
    problems: list[str] = []
    try:
        starts_at = hold.starts_at(hold_minutes)
    except hold.HoldError as error:
        problems.append(str(error))
        starts_at = None
    options = dict(options or {})
    topic, premise = topic.strip(), premise.strip()
    # One bound wherever a debate is made (the form, the API, the command line): the columns' own.
    for label, text, field in (("topic", topic, "topic"), ("premise", premise, "premise")):
        limit = Debate._meta.get_field(field).max_length
        if len(text) > limit:
            problems.append(f"The {label} may be at most {limit} characters; this one is {len(text)}.")
    material = clean_material(material)
    if refusal := material_refusal(material):
        problems.append(refusal)
    specs = {spec.key: spec for spec in fmt.seat_specs}
    infos: list[SeatInfo] = []
    rows: list[Seat] = []
    told: set[str] = set()  # a seat refused here: not "empty" as well
    for order, (key, choice) in enumerate(seats.items()):
        seat_spec = specs.get(key)
        if seat_spec is None:
            problems.append(f"{fmt.title} has no seat called {key!r}.")
            continue
        if choice.is_human:
            if not seat_spec.human_allowed:
                problems.append(f"The {seat_spec.label} seat cannot be taken by a person.")
                told.add(seat_empty(seat_spec))
                continue
            name = choice.human_name or "You"
            info = SeatInfo(key=key, role=seat_spec.role, name=name, side=seat_spec.side, is_human=True)
            rows.append(Seat(key=key, role=seat_spec.role, side=seat_spec.side, order=order, name=name, is_human=True))
        else:
            spec = choice.resolved_spec()
            assert spec is not None
            try:
                llm = _llm_snapshot(choice, spec)
            except UnknownProvider as error:
                problems.append(str(error))
                told.add(seat_empty(seat_spec))
                continue
            prompt = spec.system_prompt(seat_spec.role)
            info = SeatInfo(key=key, role=seat_spec.role, name=spec.name, side=seat_spec.side, system_prompt=prompt)
            rows.append(
                Seat(
                    key=key,
                    role=seat_spec.role,
                    side=seat_spec.side,
                    order=order,
                    name=spec.name,
                    persona=choice.persona,
                    system_prompt=prompt,
                    llm=llm,
                )
            )
        infos.append(info)
    if repeated_names((i.key, i.name) for i in infos):
        problems.append("Each seat needs a different persona: the transcript tells speakers apart by name.")
    config = DebateConfig(
        format=fmt.name, topic=topic, premise=premise, material=material, options=options, seats=tuple(infos)
    )
    try:
        fmt.validate(config)
    except FormatError as error:
        problems += [p for p in error.sentences if p not in problems and p not in told]
    fields = {
        "topic": topic,
        "premise": premise,
        "material": material,
        "format": fmt.name,
        "card_source": card_source,
        "options": options,
        "starts_at": starts_at,
    }
    return _Checked(fmt, fields, rows, problems)


def debate_problems(
    *,
    format_name: str,
    topic: str,
    premise: str = "",
    material: str = "",
    seats: dict[str, SeatChoice],
    options: dict[str, Any] | None = None,
    hold_minutes: int = 0,
    card_source: str = "",
) -> list[str]:
    """Every problem that keeps `create_debate` from making this debate, in its words, nothing made ([]: none).
    Raises FormatError only for a format that is not there."""
    return _checked(
        format_name=format_name,
        topic=topic,
        premise=premise,
        material=material,
        seats=seats,
        options=options,
        hold_minutes=hold_minutes,
        card_source=card_source,
    ).problems


def create_debate(
    *,
    format_name: str,
    topic: str,
    premise: str = "",
    material: str = "",
    seats: dict[str, SeatChoice],
    options: dict[str, Any] | None = None,
    owner: Any = None,
    visibility: str = Debate.Visibility.PRIVATE,
    in_batch: bool = False,
    show_thinking: bool = True,
    audience_poll: bool | None = None,
    hold_minutes: int = 0,
    card_source: str = "",
) -> Debate:
    """Validate and store a new debate (status pending). Raises FormatError with a message for the user, naming
    every problem at once (`debate_problems`).

    `audience_poll`: whether the audience votes before and after (audience/votes.py); by default on, but for a
    batch's (a tournament's) matches. `hold_minutes`: the owner's hold of the start (debates/hold.py).
    `card_source`: the YAML of the card the debate is made from, kept with it as it is now. `material`: what the
    debate carries beyond its topic (a passage, a question and its answers), up to CHAOSLM_MAX_MATERIAL characters."""
    checked = _checked(
        format_name=format_name,
        topic=topic,
        premise=premise,
        material=material,
        seats=seats,
        options=options,
        hold_minutes=hold_minutes,
        card_source=card_source,
    )
    if checked.problems:
        raise FormatError(*checked.problems)
    with transaction.atomic():
        debate = Debate.objects.create(
            **checked.fields,
            owner=owner,
            visibility=visibility,
            in_batch=in_batch,
            show_thinking=show_thinking,
            audience_poll=not in_batch if audience_poll is None else audience_poll,
        )
        for row in checked.rows:
            row.debate = debate
        Seat.objects.bulk_create(checked.rows)
    return debate
