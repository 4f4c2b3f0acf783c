"""The debate formats, by name. Each is a pure `next_steps(config, records)`; see base.py.

The registry is read when it is used (each request, command and run asks `FORMATS`, `LISTED` or `get_format`),
never copied at import, so a format registered later (`register`, a test's `registered`) is offered everywhere a
built-in is."""

from collections.abc import Iterator
from contextlib import contextmanager

from debates.formats.base import DebateConfig, Format, FormatError, Plan, Record, SeatInfo, Side, Step
from debates.formats.card import card_format
from debates.formats.duel import Duel
from debates.formats.evidence import PROTOCOLS, REPLAY
from debates.formats.judge import Judge
from debates.formats.moderated import Classic, Custom, Standard
from debates.formats.panel import Panel
from debates.formats.sides_judge import SidesJudge
from debates.formats.structured import Structured

FORMATS: dict[str, Format] = {
    f.name: f
    for f in (Duel(), Classic(), Standard(), Custom(), Structured(), Panel(), Judge(), *PROTOCOLS.values(), REPLAY)
}
FORMATS[SidesJudge.name] = SidesJudge()

# The format the new-debate form, the `debate` command and the API start when none is named.
DEFAULT_FORMAT = Duel.name

# The formats a person starts directly (the form, the `debate` command).
LISTED: dict[str, Format] = {name: f for name, f in FORMATS.items() if f.listed}


def register(fmt: Format) -> Format:
    """Make `fmt` known by its name: run by every debate that names it, and offered (if `listed`) in the new-debate
    form, the `debate` command, the API's formats and tournaments. A format of this package is registered by its
    line in `FORMATS` above instead."""
    if fmt.name in FORMATS:
        raise FormatError(f"There is already a format called {fmt.name!r}.")
    FORMATS[fmt.name] = fmt
    if fmt.listed:
        LISTED[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    """Forget the format called `name` (a debate that names it can no longer run or render)."""
    FORMATS.pop(name, None)
    LISTED.pop(name, None)


@contextmanager
def registered(fmt: Format) -> Iterator[Format]:
    """`fmt` registered for the length of the block (a test's own format)."""
    register(fmt)
    try:
        yield fmt
    finally:
        unregister(fmt.name)


def get_format(name: str, card_source: str = "") -> Format:
    """The format called `name`; a debate made from a card passes the card's YAML as `card_source`."""
    if card_source:
        return card_format(card_source)
    try:
        return FORMATS[name]
    except KeyError:
        raise FormatError(f"There is no format called {name!r}; the formats are {', '.join(FORMATS)}.") from None


__all__ = [
    "DEFAULT_FORMAT",
    "FORMATS",
    "LISTED",
    "DebateConfig",
    "Format",
    "FormatError",
    "Plan",
    "Record",
    "SeatInfo",
    "Side",
    "Step",
    "get_format",
    "register",
    "registered",
    "unregister",
]
