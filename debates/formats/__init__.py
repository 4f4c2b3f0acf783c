"""The debate formats, by name. Each is a pure `next_steps(config, records)`; see base.py."""

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
]
