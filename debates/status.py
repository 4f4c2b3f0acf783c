"""The debate's status line, in words: who is doing what, at which stage. What each step is called is its
format's (`Format.doing`).

One function (`status_line`) writes the whole line, for the page as it loads and for every live push
alike, so a new kind of status (a wait, a queue) is added here once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils.text import capfirst

from debates.formats import Format, FormatError, Step
from debates.formats.base import PRIVATE
from debates.formats.card import decide
from debates.models import Debate, Event


def activity(name: str, step: Step, fmt: Format, options: Mapping[str, object] | None = None) -> str:
    """One seat's part of the status line: "Ada Sterling is planning (private)". The words are its format's
    (`Format.doing`); `options` are the debate's (a duel numbers its turns: "turn 3 of 6")."""
    private = " (private)" if step.visibility == PRIVATE else ""
    return f"{name} is {fmt.doing(step, options or {})}{private}"


@dataclass(frozen=True)
class StatusLine:
    """The line as the partial draws it: the main sentence, then quieter details (" · " before each)."""

    text: str
    details: tuple[str, ...] = field(default_factory=tuple)
    # The line for a viewer who is not the person in the seat, where `text` speaks to that person ("Waiting for
    # you"): one push reaches every viewer, so the page's CSS shows the one that is true for its reader.
    others: str = ""


def status_line(
    debate: Debate,
    doing: Sequence[str] = (),
    stage: str = "",
    waiting: str = "",
    awaited: str = "",
    tally: str | None = None,
) -> StatusLine:
    """The debate's status line.

    `doing`: the activities in flight (`activity`); `stage`: the last stage the format announced ("Round 2 of
    3"); `waiting`: a wait the gateway is sitting out ("Rate limited: trying again in 5s"); `awaited`: the step a
    person's message gives, when the debate waits for it ("Negative rebuttal"); `tally`: the answers so far as
    `answers_so_far` says them, when the caller keeps them (None: read from the database here).
    """
    details: list[str] = []
    others = ""
    if debate.status == Debate.Status.RUNNING:
        text = "; ".join(doing) + "." if doing else "Running…"
        if debate.is_ending:
            details.append("ending")
    elif debate.status == Debate.Status.WAITING:
        text = (
            f"Waiting for you: it is your turn to give the {awaited}."
            if awaited
            else "Waiting for you: it is your turn to speak."
        )
        person = debate.seats.filter(is_human=True).values_list("name", flat=True).first() or "a person"
        others = f"Waiting for {person} to give the {awaited}." if awaited else f"Waiting for {person} to speak."
    elif debate.status == Debate.Status.ERROR:
        text = f"Stopped with an error: {debate.error_text}"
    elif debate.held():
        # Its start time and countdown are the hold's box (debates/_hold.html): said once on the page.
        text = "Held so an audience can gather: it has not started."
    else:
        text = f"{capfirst(debate.get_status_display())}."
        if debate.status == Debate.Status.COMPLETED and debate.is_ending:
            statements = debate.events.filter(kind=Event.Kind.TURN).count()
            note = debate.fmt.ended_early(debate.options, statements)
            details.extend([note] if note else [])
    if stage and debate.status in (Debate.Status.RUNNING, Debate.Status.WAITING):
        details.append(stage)
    if debate.status in (Debate.Status.RUNNING, Debate.Status.WAITING, Debate.Status.INTERRUPTED):
        tally = answers_so_far(debate) if tally is None else tally
        if tally:
            details.append(tally)
    if waiting:
        details.append(waiting)
    return StatusLine(text=text, details=tuple(details), others=others)


def answers_so_far(debate: Debate) -> str:
    """Each seat's latest answer, the same answers together, most given first: "Answers so far: 42 (Ada, Bob),
    41 (Cy)"; "" for a debate whose format gives none, or before the first (an abstention is left out)."""
    return tally_of(answer_rows(debate))


def answer_rows(debate: Debate) -> list[tuple[str, str, dict[str, Any]]]:
    """The debate's answering speeches as `tally_of` reads them, in order; none for a format that gives none."""
    try:
        if not debate.fmt.gives_answers():
            return []
    except FormatError:
        return []
    rows = debate.events.filter(kind=Event.Kind.TURN, data__has_key="answer_kind").order_by("ordinal")
    return list(rows.values_list("seat__key", "seat__name", "data"))


def tally_of(rows: Iterable[tuple[str, str, dict[str, Any]]]) -> str:
    """`answers_so_far` of the answering speeches `rows` (seat key, seat name, data), in the order given."""
    latest: dict[str, Any] = {}
    names: dict[str, str] = {}
    for seat, name, data in rows:
        answer = decide.given(data)
        if answer is not None:
            latest[seat], names[seat] = answer, name
    groups: dict[Any, tuple[str, list[str]]] = {}
    for seat, answer in latest.items():
        groups.setdefault(decide.key(answer), (decide.shown(answer), []))[1].append(names[seat])
    if not groups:
        return ""
    ranked = sorted(groups.values(), key=lambda group: -len(group[1]))  # stable: the first given first in a tie
    return "Answers so far: " + ", ".join(f"{shown} ({', '.join(who)})" for shown, who in ranked)
