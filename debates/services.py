"""What a debate's owner does to a debate: speak in a human seat, end it. Used by the web and the command line."""

from __future__ import annotations

from django.db import transaction

from chaoslm import runner
from debates.formats import FormatError
from debates.models import Debate, Event

MAX_MESSAGE_CHARS = 4000


def post_message(debate_id: int, text: str) -> Event:
    """Store the owner's message for the human seat the debate is waiting for.

    Raises FormatError with a message for the person when the message is empty or too long, or
    when it is not their turn. The caller then runs the engine again.
    """
    text = text.strip()
    if not text:
        raise FormatError("Write something first.")
    if len(text) > MAX_MESSAGE_CHARS:
        raise FormatError(f"Messages may be at most {MAX_MESSAGE_CHARS} characters; this one is {len(text)}.")
    with transaction.atomic():
        debate = Debate.objects.select_for_update().get(pk=debate_id)
        if debate.status != Debate.Status.WAITING:
            raise FormatError("It is not your turn to speak.")
        seat = debate.seats.filter(is_human=True).first()
        if seat is None:
            raise FormatError("This debate has no seat for a person.")
        last = debate.events.order_by("-ordinal").values_list("ordinal", flat=True).first() or 0
        event = Event.objects.create(
            debate=debate,
            seat=seat,
            kind=Event.Kind.USER,
            step="human",
            ordinal=last + 1,
            content=text,
            visibility=Event.Visibility.PUBLIC,
        )
        debate.status = Debate.Status.RUNNING
        debate.save(update_fields=["status", "updated_at"])
    return event


def end_debate(debate_id: int) -> Debate:
    """Ask the debate to end: its format brings it to a close (a summary, a verdict) at its next step."""
    Debate.objects.filter(pk=debate_id).update(is_ending=True)
    return Debate.objects.get(pk=debate_id)


def set_show_thinking(debate: Debate, show: bool) -> None:
    """The owner's choice: whether viewers other than the owner and staff see the debaters' private thinking."""
    debate.show_thinking = show
    debate.save(update_fields=["show_thinking", "updated_at"])


def delete_debate(debate: Debate) -> None:
    """Delete a debate, stopping its run first: an inline run is cancelled at once (its calls in flight are
    dropped); a run on a Celery worker finds the debate gone at its next write and stops quietly."""
    runner.cancel("debate", debate.pk)
    runner.delete_under_work(Debate.objects.filter(pk=debate.pk))
