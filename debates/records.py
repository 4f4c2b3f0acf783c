"""A stored event as the formats read it (a `Record`): the engine, replays and selectors share this, so reading a
finished debate's verdict (selectors, the exports) needs no engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from debates.formats import DebateConfig, Format, FormatError, Record, SeatInfo
from debates.formats.base import PERSON_STEP
from debates.models import Event


def record_of(event: Event, seat_key: str | None) -> Record:
    return Record(
        ordinal=event.ordinal,
        kind=event.kind,
        seat=seat_key,
        step=event.step,
        prompt=event.prompt,
        content=event.content,
        data=event.data,
        visibility=event.visibility,
    )


def config_of(debate: Any, seats: Sequence[Any], *, is_ending: bool = False) -> DebateConfig:
    """A stored debate as its format reads it, with these of its seats in this order (a migration's historical rows
    read the same)."""
    return DebateConfig(
        format=debate.format,
        topic=debate.topic,
        premise=debate.premise,
        material=debate.material,
        options=debate.options,
        seats=tuple(SeatInfo(s.key, s.role, s.name, s.side, s.system_prompt, s.is_human) for s in seats),
        is_ending=is_ending,
    )


def person_steps(fmt: Format, config: DebateConfig, records: Sequence[Record]) -> dict[int, str]:
    """The step each of a person's messages stored as `PERSON_STEP` gave, by ordinal: the one its format awaited
    when it came (its plan on the records before it). A message no step asked for (a moderated discussion's)
    is left out, as is one whose debate its format no longer reads."""
    found: dict[int, str] = {}
    ordered = sorted(records, key=lambda r: r.ordinal)
    for position, record in enumerate(ordered):
        if record.kind != "USER" or record.step != PERSON_STEP:
            continue
        try:
            step = fmt.next_steps(config, ordered[:position]).awaited_step
        except FormatError:
            continue
        if step:
            found[record.ordinal] = step
    return found
