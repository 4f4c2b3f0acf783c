"""The debate formats, by name. Each is a pure `next_steps(config, records)`; see base.py."""

from debates.formats.base import DebateConfig, Format, FormatError, Plan, Record, SeatInfo, Step
from debates.formats.duel import Duel

FORMATS: dict[str, Format] = {f.name: f for f in (Duel(),)}


def get_format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise FormatError(f"There is no format called {name!r}; the formats are {', '.join(FORMATS)}.") from None


__all__ = ["FORMATS", "DebateConfig", "Format", "FormatError", "Plan", "Record", "SeatInfo", "Step", "get_format"]
