"""An event card names the step a speaker spoke in ("· opening statement") unless its format says the name tells a
reader nothing (the duel's ordinary "respond" turn, a moderated debate's "discussion", a person's message): the
format decides (`Format.step_label`), on the page and in the terminal alike; the card tests no step names."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from debates import event_cards
from debates.formats import FORMATS, get_format
from debates.formats.base import PERSON_STEP
from debates.formats.duel import Duel
from debates.models import Debate, Event, Seat
from debates.terminal import TerminalObserver


class Toast(Duel):
    """A duel whose ordinary turn is a toast, and which words its reply its own way."""

    name = "toast_cards"
    plain_steps = frozenset({"toast"})

    def step_label(self, step: str) -> str:
        return "raising a glass back" if step == "reply" else super().step_label(step)


@pytest.fixture
def toast(monkeypatch):
    monkeypatch.setitem(FORMATS, Toast.name, Toast())


def card_label(format_name: str, step: str, kind: str = "TURN") -> str:
    """The words after the speaker's name (its side as the format words it) on the card of a public event of `step`
    (no database: the card is rendered from the event as the engine saves it)."""
    debate = Debate(format=format_name, topic="Friday")
    seat = Seat(debate=debate, key="a", name="Hal", role="debater", side="for")
    event = Event(debate=debate, seat=seat, kind=kind, step=step, ordinal=3, content="To Friday!", visibility="public")
    header = re.search(r"<header>(.*?)</header>", event_cards.render(event, seat), re.S).group(1)
    return " ".join(re.sub(r"<[^>]+>", " ", header).split())


def test_the_duel_names_its_special_steps_but_not_its_ordinary_turn():
    assert card_label("duel", "respond") == "Hal For"
    assert card_label("duel", "respond_final") == "Hal For · respond final"
    # A person's stored card names them alone, the same for every viewer: the page says "(you)" to the person in
    # the seat only (tests/debates/test_true_words.py).
    assert card_label("duel", PERSON_STEP, kind="USER") == "Hal For"


def test_a_moderated_debate_names_the_moderator_steps_but_not_a_participant_turn():
    assert card_label("standard", "discussion") == "Hal for"
    assert card_label("standard", "introduction") == "Hal for · introduction"


def test_the_format_decides_what_the_card_and_the_terminal_name(toast):
    # "respond" is the duel's plain turn; this format names it, hides its own, and words its reply.
    assert card_label("toast_cards", "toast") == "Hal For"
    assert card_label("toast_cards", "respond") == "Hal For · respond"
    assert card_label("toast_cards", "reply") == "Hal For · raising a glass back"

    console = Console(record=True, width=100)
    observer = TerminalObserver(console, get_format("toast_cards"), {"a": ("Hal", "for")})
    debate = Debate(format="toast_cards", topic="Friday")
    for step in ("toast", "reply"):
        observer.print_event(Event(debate=debate, kind="TURN", step=step, content="Cheers.", visibility="public"), "a")
    assert [line for line in console.export_text().splitlines() if line.startswith("Hal")] == [
        "Hal (for)",
        "Hal (for) · raising a glass back",
    ]
