"""The debate's status line, in words: who is doing what, at which stage. What each step is called is its
format's (`Format.doing`).

One function (`status_line`) writes the whole line, for the page as it loads and for every live push
alike, so a new kind of status (a wait, a queue) is added here once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.utils.text import capfirst

from debates.formats import Format, Step
from debates.formats.base import PRIVATE
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


def status_line(
    debate: Debate, doing: Sequence[str] = (), stage: str = "", waiting: str = "", awaited: str = ""
) -> StatusLine:
    """The debate's status line.

    `doing`: the activities in flight (`activity`); `stage`: the last stage the format announced ("Round 2 of
    3"); `waiting`: a wait the gateway is sitting out ("Rate limited: trying again in 5s"); `awaited`: the step a
    person's message gives, when the debate waits for it ("Negative rebuttal").
    """
    details: list[str] = []
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
    if waiting:
        details.append(waiting)
    return StatusLine(text=text, details=tuple(details))
