"""A stored event as the formats read it (a `Record`): the engine, replays and selectors share this, so reading a
finished debate's verdict (selectors, the exports) needs no engine."""

from __future__ import annotations

from debates.formats import Record
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
