"""What a debate's owner does to a debate: start it, speak in a human seat, end it, retry it. Used by the web
pages, the JSON API and the command line."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from chaoslm import costs, limits, live, runner
from debates import hold
from debates import limits as debate_limits
from debates.broadcast import card_push, live_parts_html, push_thinking_to_viewers
from debates.formats import FormatError
from debates.formats.base import PERSON_STEP
from debates.forms import YOU, NewDebateForm
from debates.models import Debate, Event
from debates.selectors import awaited_step
from debates.setup import SeatChoice, create_debate
from personas.models import Persona

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
        # Stored as the speech it gives, so its card, the exports and the API label it as a model's speech is.
        step = awaited_step(debate, list(debate.seats.all())) or PERSON_STEP
        event = Event.objects.create(
            debate=debate,
            seat=seat,
            kind=Event.Kind.USER,
            step=step,
            ordinal=last + 1,
            content=text,
            visibility=Event.Visibility.PUBLIC,
        )
        debate.status = Debate.Status.RUNNING
        debate.save(update_fields=["status", "updated_at"])
    return event


def end_debate(debate_id: int) -> Debate:
    """Ask the debate to end: its format brings it to a close (a summary, a verdict) at its next step, though its
    batch had stopped it."""
    Debate.objects.filter(pk=debate_id).update(is_ending=True, stop_requested=False)
    return Debate.objects.get(pk=debate_id)


def let_run(debate_id: int) -> None:
    """The owner runs it again (a retry, `debate --resume`), though its batch had stopped it (`stop_requested`)."""
    Debate.objects.filter(pk=debate_id, stop_requested=True).update(stop_requested=False)


def set_show_thinking(debate: Debate, show: bool) -> None:
    """The owner's choice: whether viewers other than the owner and staff see the debaters' private thinking."""
    debate.show_thinking = show
    debate.save(update_fields=["show_thinking", "updated_at"])


def delete_debate(debate: Debate) -> None:
    """Delete a debate, stopping its run first: an inline run is cancelled at once (its calls in flight are
    dropped); a run on a Celery worker finds the debate gone at its next write and stops quietly."""
    runner.cancel("debate", debate.pk, wait=True)
    runner.delete_under_work(Debate.objects.filter(pk=debate.pk))


def start_debate(user: Any, form: NewDebateForm) -> Debate:
    """Create the debate a valid new-debate form describes, for `user`, and start it.

    Raises FormatError, limits.LimitReached or costs.OverBudget with a message for the person.
    """
    data = form.cleaned_data
    seats: dict[str, SeatChoice] = {}
    for spec in form.fmt.seat_specs:
        value = data.get(f"seat_{spec.key}")
        if spec.human_allowed and value in (True, YOU):  # a checkbox's True, or a persona seat's YOU
            seats[spec.key] = SeatChoice(human_name=user.get_username())
        elif isinstance(value, Persona):
            seats[spec.key] = SeatChoice(persona=value)
    with limits.starting(user):
        debate_limits.check_start(user)
        if costs.monthly_budget(user) is not None:  # no estimate (no price lookup) for whom has no budget
            costs.check(user, cost_estimate(form))
        debate = create_debate(
            format_name=form.fmt.name,
            topic=data["topic"],
            premise=data["premise"],
            material=data["material"],
            seats=seats,
            options=form.options(),
            owner=user,
            visibility=data["visibility"],
            show_thinking=data["show_thinking"],
            audience_poll=data["audience_poll"],
            hold_minutes=data["hold"],
            card_source=form.card_source,
        )
        if debate.starts_at is not None:
            hold.schedule(debate)
        else:
            runner.submit("debate", debate.pk)
    return debate


def cost_estimate(form: NewDebateForm) -> costs.CostRange | None:
    """What the debate a valid form describes will cost, for a format that knows its number of calls from its
    options (`Format.calls`); None for one that does not (a debate that waits for people, or ends when it ends)."""
    planned = getattr(form.fmt, "calls", None)
    if planned is None:
        return None
    personas = [v for k, v in form.cleaned_data.items() if k.startswith("seat_") and isinstance(v, Persona)]
    return costs.estimate(planned(form.options()), [p.endpoint() for p in personas])


def push_state(debate: Debate, before: str = "") -> None:
    """Push the live parts as the database has them to the debate's open pages, after `before` (more HTML)."""
    debate.refresh_from_db()
    live.push_to_debate_sync(debate.pk, before + live_parts_html(debate))


def end(debate: Debate) -> Debate:
    """The owner ends a debate: it is asked to close, run again if it is not running, and its pages follow."""
    if debate.status == Debate.Status.COMPLETED:
        return debate
    debate = end_debate(debate.pk)
    if debate.status != Debate.Status.RUNNING or runner.gone(debate.runner):
        runner.submit("debate", debate.pk)
    push_state(debate)
    return debate


def speak(user: Any, debate: Debate, text: str) -> Event:
    """The owner's message in the human seat; the debate runs on. Raises FormatError or LimitReached."""
    with limits.starting(user):
        # The message sets the debate running again: it counts, though it is no new start.
        debate_limits.check_start(user, rate=False)
        event = post_message(debate.pk, text)
    # The card and the status it brings (running) in one push, before the engine's own: a page never shows
    # the new card beside a stale "your turn", which would invite a second message that is refused.
    push_state(debate, card_push(event))
    runner.submit("debate", debate.pk)
    return event


def retry(user: Any, debate: Debate) -> bool:
    """Run a failed or interrupted debate again, or one left running by a process that has ended (False: there was
    nothing to retry). Raises LimitReached, or costs.OverBudget when the owner's monthly budget is spent."""
    stopped = debate.status == Debate.Status.RUNNING and runner.gone(debate.runner)
    if debate.status not in (Debate.Status.ERROR, Debate.Status.INTERRUPTED) and not stopped:
        return False
    with limits.starting(user):
        debate_limits.check_start(user)
        costs.check(debate.owner)
        let_run(debate.pk)
        runner.submit("debate", debate.pk)
    return True


def start_now(debate: Debate) -> bool:
    """The owner ends the hold: the debate starts at once (False: it was not held). Its pages follow."""
    if not hold.start_now(debate):
        return False
    push_state(debate)
    return True


def show_thinking(debate: Debate, show: bool) -> None:
    """`set_show_thinking`, and the viewers' open pages follow the choice."""
    set_show_thinking(debate, show)
    push_thinking_to_viewers(debate)
