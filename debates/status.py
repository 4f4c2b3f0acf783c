"""The debate's status line, in words: who is doing what, at which stage.

One function (`status_line`) writes the whole line, for the page as it loads and for every live push
alike, so a new kind of status (a wait, a queue) is added here once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.utils.text import capfirst

from debates.formats import Step, get_format
from debates.formats.base import PRIVATE
from debates.models import Debate, Event

# What a seat is doing during each protocol step, by step name; {turn} is the duel's turn number.
DOING = {
    "plan": "planning",
    "preparation": "preparing",
    "think_opening": "thinking over the opening statement",
    "opening": "giving the opening statement",
    "think": "thinking over turn {turn}",
    "think_final": "thinking over turn {turn}",
    "respond": "giving turn {turn}",
    "respond_final": "giving turn {turn}",
    "rebuttal": "giving a rebuttal",
    "closing": "giving the closing statement",
    "evaluate": "evaluating turn {turn}",
    "score_first": "scoring turn {turn}",
    "score": "scoring turn {turn}",
    "deliberate": "deliberating on the verdict",
    "confirm_winner": "naming the winner",
    "verdict_json": "writing down the verdict",
    "announce": "announcing the verdict",
}
# Steps the table does not name (a moderated format's stages, a panel's seats): by kind.
DOING_BY_KIND = {
    "PLAN": "planning",
    "THINK": "thinking",
    "TURN": "speaking",
    "SCORE": "scoring",
    "VERDICT": "announcing the verdict",
    "INTERNAL": "weighing the verdict",
}


def activity(name: str, step: Step, options: Mapping[str, object] | None = None) -> str:
    """One seat's part of the status line: "Ada Sterling is planning (private)".

    `options` are the debate's: a duel's turns number its turns ("turn 3 of 6"). Only the duel's steps (and
    the judge replay's, which keeps its ordinals) say {turn}, and there turn t's think and statement are at
    ordinals 4t-1 and 4t, its judging at 4t+1 and 4t+2.
    """
    number = step.step.rpartition("_")[2]
    if step.step.startswith("question_") and number.isdigit():
        doing = f"asking question {number}"
    elif step.step.startswith("answer_") and number.isdigit():
        doing = f"answering question {number}"
    else:
        doing = DOING.get(step.step) or DOING_BY_KIND.get(step.kind, "working")
    if "{turn}" in doing:
        turns = (options or {}).get("turns")
        doing = doing.format(turn=f"{(step.ordinal + 1) // 4}" + (f" of {turns}" if turns else ""))
    private = " (private)" if step.visibility == PRIVATE else ""
    return f"{name} is {doing}{private}"


@dataclass(frozen=True)
class StatusLine:
    """The line as the partial draws it: the main sentence, then quieter details (" · " before each)."""

    text: str
    details: tuple[str, ...] = field(default_factory=tuple)


def status_line(debate: Debate, doing: Sequence[str] = (), stage: str = "", waiting: str = "") -> StatusLine:
    """The debate's status line.

    `doing`: the activities in flight (`activity`); `stage`: the last stage the format announced ("Round 2 of
    3"); `waiting`: a wait the gateway is sitting out ("Rate limited: trying again in 5s").
    """
    details: list[str] = []
    if debate.status == Debate.Status.RUNNING:
        text = "; ".join(doing) + "." if doing else "Running…"
        if debate.is_ending:
            details.append("ending")
    elif debate.status == Debate.Status.WAITING:
        text = "Waiting for you: it is your turn to speak."
    elif debate.status == Debate.Status.ERROR:
        text = f"Stopped with an error: {debate.error_text}"
    else:
        text = f"{capfirst(debate.get_status_display())}."
        if debate.status == Debate.Status.COMPLETED and debate.is_ending:
            statements = debate.events.filter(kind=Event.Kind.TURN).count()
            note = get_format(debate.format).ended_early(debate.options, statements)
            details.extend([note] if note else [])
    if stage and debate.status in (Debate.Status.RUNNING, Debate.Status.WAITING):
        details.append(stage)
    if waiting:
        details.append(waiting)
    return StatusLine(text=text, details=tuple(details))
