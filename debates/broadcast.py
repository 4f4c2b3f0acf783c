"""Rendering a debate's visual units, and pushing them live while the engine runs.

The same partials draw the full page and every push: an event card, the card being written, the
score chart, the verdict box, the status line. Pushes are hx-swap-oob fragments, and card pushes are
idempotent: the page's `upsert` swap (static/js/chaoslm.js) replaces a card with the same id or else
appends it, and cards are laid out by their ordinal (CSS `order`), so a page that receives an event
twice, or late, still shows it once, in place. Tokens go through the `tokens` swap, which appends to
the card being written if the page has it and drops them quietly if not (the saved card follows).

A debate's pages listen in one of two groups (debates/privacy.py): its owner's and staff's
(`live.debate_group`), and everyone else's (`live.debate_viewers_group`). Both get the same pushes but for
private events: the viewers' group never gets their tokens, and gets their saved card only while the owner
shows the private thinking (else a placeholder with no text).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.template.loader import render_to_string

from chaoslm import live
from chaoslm.llm.pace import slow_note
from debates import poll_hooks, privacy
from debates.engine import Observer
from debates.event_cards import card_html, cards_of, hidden_card
from debates.formats import Step
from debates.models import Debate, Event, Seat
from debates.selectors import SeatUsage, page_state, score_chart, usage_context
from debates.status import activity, answer_rows, status_line, tally_of


def _seat_names(debate: Debate) -> dict[str, str]:
    return dict(debate.seats.values_list("key", "name"))


def card_push(event: Event) -> str:
    return live.upsert(card_html(event), "#transcript")


def status_html(
    debate: Debate, doing: Sequence[str] = (), waiting: str = "", stage: str = "", tally: str | None = None
) -> str:
    line = status_line(debate, doing, stage, waiting, tally=tally)
    return render_to_string("partials/status.html", {"debate": debate, "status_line": line, "oob": True})


def group_of(debate: Debate, *, insider: bool) -> str:
    """The group of a page whose viewer is, or is not, the owner or staff at the debate's own address."""
    return live.debate_groups(debate.pk)[0 if insider else 1]


def live_parts_html(
    debate: Debate,
    with_cards_since: int | None = None,
    state: dict[str, Any] | None = None,
    *,
    thinking: bool = True,
) -> str:
    """The chart, verdict, usage and controls as they stand, and optionally every card after an event id.

    `state` is the debate's `page_state`, if the caller has just loaded it; else it is loaded with or
    without the private events' text (`thinking`).
    """
    state = page_state(debate, thinking=thinking) if state is None else state
    parts = []
    if with_cards_since is not None:
        cards = (card for card in state["events"] if card.pk > with_cards_since)
        parts.extend(live.upsert(card.filled(), "#transcript") for card in cards)
    for template in ("partials/score_chart.html", "partials/verdict.html", "partials/usage.html"):
        parts.append(render_to_string(template, {**state, "oob": True}))
    parts.append(render_to_string("partials/status.html", {**state, "oob": True}))
    if debate.starts_at is not None and not debate.held():  # the hold is over: its countdown goes
        parts.append(render_to_string("debates/_hold.html", {"hold": None, "oob": True}))
    parts.append(poll_hooks.poll().current_ping(debate))  # a vote may have opened or closed with the status
    return "".join(parts)


def _text_of(ordinal: int) -> str:
    """The id of the element a card being written streams its text into (partials/writing_card.html)."""
    return f"ev-{ordinal}-text"


def catch_up_html(debate_id: int, since_id: int, *, insider: bool = True) -> str:
    """What a (re)connecting page needs: every card it may have missed, the cards being written with their
    text so far, and the live parts as they stand.

    Many spectators arriving at once ask for the same thing, so the saved part is cached under a key that
    changes with every event and every status change (and with who may read the private thinking). The cards
    being written come first: a page never lets one replace a saved card (static/js/chaoslm.js), so one
    saved while this was read still shows saved.
    """
    debate = Debate.objects.get(pk=debate_id)
    thinking = (privacy.EVERYTHING if insider else privacy.viewers_access(debate)).thinking
    latest = debate.events.order_by("-pk").values_list("pk", flat=True).first() or 0
    key = (
        f"catch-up:{debate_id}:{since_id}:{latest}:{debate.status}:{debate.is_ending}:"
        f"{debate.updated_at.timestamp()}:{int(thinking)}"
    )
    html = cache.get(key)
    if html is None:
        html = live_parts_html(debate, with_cards_since=since_id, thinking=thinking)
        cache.set(key, html, 60)
    if debate.status != Debate.Status.RUNNING:
        return html  # what a run killed mid-step kept is no longer being written
    return live.writing_html(group_of(debate, insider=insider), "#transcript") + html


def push_thinking_to_viewers(debate: Debate) -> None:
    """After the owner shows or hides the thinking: the viewers' pages get every private card again, in full
    or as placeholders, so what they show follows the choice without a reload."""
    private = debate.events.filter(visibility=Event.Visibility.PRIVATE).exclude(kind=Event.Kind.INTERNAL)
    cards = cards_of(private, thinking=privacy.viewers_access(debate).thinking)
    html = "".join(live.upsert(card.filled(), "#transcript") for card in cards)
    live.push_sync(live.debate_viewers_group(debate.pk), html)


# How long after a run starts the owner's page is taken to be opening: the redirect after the form, the page,
# its websocket; a phone on a slow network included.
PAGE_OPENING_SECONDS = 10.0


class DebateBroadcaster(Observer):
    """An engine observer that pushes a running debate to its page's websocket group, in order.

    It loads the debate's seats, scores and token counts once, then keeps them up to date from the
    events it is told about, so an event's pushes (card, chart, usage, status) cost no query. While no page
    watches (a tournament's matches, mostly), it keeps its state and draws nothing: a page that opens
    later gets what it missed from its catch-up.
    """

    def __init__(self, debate_id: int) -> None:
        self.debate_id = debate_id
        self.group, self.viewers_group = live.debate_groups(debate_id)
        self.outbox = live.Outbox(self.group, "#transcript")
        self.viewers = live.Outbox(self.viewers_group, "#transcript")
        self.thinking: dict[int, Step] = {}  # the steps in flight, by ordinal
        self.ahead: dict[int, int] = {}  # ordinal -> calls ahead of its call, waiting for the embedded model
        self.paces: dict[str, float] = {}  # seat key -> the embedded model's last measured tokens/s for it
        self.seats: dict[int, Seat] = {}
        self.seat_names: dict[str, str] = {}
        self.scores: list[Event] = []
        self.usage: dict[tuple[int, str], SeatUsage] = {}  # (seat id, model) -> its calls' tokens and cost
        self.stage = ""
        # The status line's answers so far, kept from the events told (seat key, name, data of each answering
        # speech): the engine's hooks run in its event loop, where the status line may not read the database.
        self.answers: list[tuple[str, str, dict[str, Any]]] = []
        self.tally = ""
        self.loaded = False
        # Until then (time.monotonic()), the page of whoever started the debate may be opening: set as a run
        # starts, for a debate with an owner that is not a tournament's match.
        self.page_opening_until = 0.0
        self.started = False
        self.debater_spoke = False  # in this run: only the first statement's push tells pages the poll changed

    def _send(self, html: str) -> None:
        self.outbox.html(html)
        self.viewers.html(html)

    def _watched(self) -> bool:
        return live.has_audience(self.group) or live.has_audience(self.viewers_group)

    async def drain(self) -> None:
        """Send what is left; the engine calls this before it returns."""
        await self.outbox.drain()
        await self.viewers.drain()

    def _live_parts(self, debate: Debate) -> str:
        state = page_state(debate)
        if not self.loaded:
            self.seats = {s.pk: s for s in state["seats"]}
            self.seat_names = {s.key: s.name for s in state["seats"]}
            self.scores = state["scores"]
            self.usage = {(row.seat.pk, row.model): row for row in state["seat_usage"] if row.model}
            self.answers = answer_rows(debate)
            self.tally = tally_of(self.answers)
            self.loaded = True
        return live_parts_html(debate, state=state)

    def _usage_html(self) -> str:
        context = usage_context(list(self.usage.values()), list(self.seats.values()))
        return render_to_string("partials/usage.html", {**context, "oob": True})

    def _shows_thinking(self) -> bool:
        # Read at each private card, not kept from the start: the owner may hide the thinking mid-debate.
        return bool(Debate.objects.filter(pk=self.debate_id).values_list("show_thinking", flat=True).first())

    # -- engine hooks -----------------------------------------------------------------------------
    def _name(self, step: Step) -> str:
        return self.seat_names.get(step.seat or "", step.seat or "")

    def _thinking(self, debate: Debate) -> list[str]:
        """What each seat is doing, in ordinal order: names are read as the line is drawn, once loaded."""
        steps = (self.thinking[ordinal] for ordinal in sorted(self.thinking))
        fmt = debate.fmt
        return [activity(self._name(step), step, fmt, debate.options) for step in steps if step.seat]

    def step_started(self, debate: Debate, step: Step) -> None:
        self.thinking[step.ordinal] = step
        if not self._watched():
            return
        if step.kind != "INTERNAL":
            # Private text streams to the owner's and staff's pages only; other viewers read it, if the owner
            # shows it, once it is saved (the choice may change while it is written).
            # Begun, not only pushed: a page that (re)connects mid-step gets the card and its text so far.
            target = _text_of(step.ordinal)
            card = render_to_string(
                "partials/writing_card.html", {"step": step, "name": self._name(step), "streamed": True}
            )
            self.outbox.begin(target, card)
            if step.visibility == "private":
                card = render_to_string(
                    "partials/writing_card.html", {"step": step, "name": self._name(step), "streamed": False}
                )
            self.viewers.begin(target, card)
        self._send(status_html(debate, self._thinking(debate), self._note(), self.stage, self.tally))

    def _drawn_as_it_runs(self) -> bool:
        # A debate no page watches (a tournament's match, a command-line run, a page closed) is neither
        # streamed nor drawn: its replies are asked for whole (reading a stream costs about twice the CPU),
        # the CPU and the database thread the runner's debates share stay theirs, and a page that opens
        # later gets the cards from its catch-up. The owner's page opens as their debate starts, just after
        # the first steps: those are shown as they are written.
        return self._watched() or time.monotonic() < self.page_opening_until

    def cards_when_saved(self) -> bool:
        return self._drawn_as_it_runs()

    def wants_deltas(self, step: Step) -> bool:
        # Raw JSON is not for reading (the card shows the parsed result when it lands), and an internal
        # step has no card.
        readable = step.json_schema is None and step.kind != "INTERNAL"
        return readable and self._drawn_as_it_runs()

    def _outboxes(self, step: Step) -> tuple[live.Outbox, ...]:
        return (self.outbox,) if step.visibility == "private" else (self.outbox, self.viewers)

    def delta(self, debate: Debate, step: Step, text: str) -> None:
        if self._watched():
            for outbox in self._outboxes(step):
                outbox.tokens(_text_of(step.ordinal), text)

    def restart(self, debate: Debate, step: Step) -> None:
        if self._watched():
            for outbox in self._outboxes(step):
                outbox.reset(_text_of(step.ordinal))

    def waiting(self, debate: Debate, step: Step, seconds: float, reason: str) -> None:
        if self._watched():
            waiting = f"{reason}: trying again in {seconds:.0f}s"
            self._send(status_html(debate, self._thinking(debate), waiting, self.stage, self.tally))

    def queued(self, debate: Debate, step: Step, ahead: int) -> None:
        if ahead:
            self.ahead[step.ordinal] = ahead
        else:
            self.ahead.pop(step.ordinal, None)
        if self._watched():
            self._send(status_html(debate, self._thinking(debate), self._note(), self.stage, self.tally))

    def pace(self, debate: Debate, step: Step, tokens_per_second: float) -> None:
        before = self._pace_note()
        self.paces[step.seat or ""] = tokens_per_second
        if self._watched() and self._pace_note() != before:
            self._send(status_html(debate, self._thinking(debate), self._note(), self.stage, self.tally))

    def _note(self) -> str:
        return self._queue_note() or self._pace_note()

    def _queue_note(self) -> str:
        # The step nearest the front speaks for the debate: it is the next to be answered.
        return f"waiting for the embedded model ({min(self.ahead.values())} ahead)" if self.ahead else ""

    def _pace_note(self) -> str:
        # The slowest seat at work speaks for the debate: "local model at 7 tokens/s" (a slow machine, not a fault).
        rates = [self.paces[seat] for step in self.thinking.values() if (seat := step.seat or "") in self.paces]
        return slow_note(min(rates)) if rates else ""

    async def _look_for_audience(self) -> None:
        for group in (self.group, self.viewers_group):
            await live.look_for_audience(group)

    async def event_saved(self, debate: Debate, event: Event) -> None:
        await self._look_for_audience()
        self.thinking.pop(event.ordinal, None)
        self.ahead.pop(event.ordinal, None)
        for outbox in (self.outbox, self.viewers):
            outbox.end(_text_of(event.ordinal))
        if event.kind == Event.Kind.SYSTEM:
            self.stage = event.data.get("status", "")
        watched = self._watched()
        if not self.loaded:
            if not watched:
                return  # the state loads, this event included, when a page first watches
            # The engine announces the debate first; this is only a fallback.
            self._send(await sync_to_async(self._live_parts)(debate))
        else:
            if event.seat_id in self.seats and event.tokens_in:
                key = (event.seat_id, event.model)
                if key not in self.usage:
                    self.usage[key] = SeatUsage(self.seats[event.seat_id], event.model)
                self.usage[key].add(event)
            if event.kind == Event.Kind.SCORE:
                self.scores.append(event)
                if watched:
                    seats = list(self.seats.values())
                    context = {"chart": score_chart(seats, self.scores), "shows_scores": True, "oob": True}
                    self._send(render_to_string("partials/score_chart.html", context))
            seat = self.seats.get(event.seat_id)
            if event.kind == Event.Kind.TURN and seat is not None and "answer_kind" in event.data:
                self.answers.append((seat.key, seat.name, event.data))
                self.tally = tally_of(self.answers)
            if watched and event.tokens_out and event.kind != Event.Kind.INTERNAL:
                self._send(self._usage_html())
        if event.kind == Event.Kind.INTERNAL or not watched:
            return
        # The seat from the loaded ones: rendering the card then needs no query, so it runs right here.
        event.seat = self.seats.get(event.seat_id)
        card = card_push(event)
        self.outbox.html(card)
        if event.visibility == Event.Visibility.PRIVATE and not await sync_to_async(self._shows_thinking)():
            card = live.upsert(hidden_card(event, event.seat), "#transcript")
        self.viewers.html(card)
        self._send(status_html(debate, self._thinking(debate), self._note(), self.stage, self.tally))
        debater_spoke = event.kind == Event.Kind.TURN and event.seat is not None and bool(event.seat.side)
        if debater_spoke and not self.debater_spoke and poll_hooks.poll().has_poll(debate):
            self._send(poll_hooks.poll().waiting_ping())  # the first debater's statement closes the vote before
        self.debater_spoke = self.debater_spoke or debater_spoke

    async def debate_changed(self, debate: Debate) -> None:
        await self._look_for_audience()
        if not self.started:
            self.started = True
            if debate.owner_id is not None and not debate.in_batch:
                self.page_opening_until = time.monotonic() + PAGE_OPENING_SECONDS
        if not self.seat_names:
            # The status line names seats even when the first page opens mid-run, before the state loads.
            self.seat_names = await sync_to_async(_seat_names)(debate)
        if debate.status != Debate.Status.RUNNING:
            for ordinal in self.thinking:
                for outbox in (self.outbox, self.viewers):
                    outbox.end(_text_of(ordinal))
            self.thinking.clear()
            self.ahead.clear()
        if self._watched():
            self._send(await sync_to_async(self._live_parts)(debate))


class AlsoLive(Observer):
    """A debate run outside the web server (`manage.py debate`): what it prints (`shown`, the terminal's observer),
    and its page's pushes (a DebateBroadcaster), so that the browser watches it live too."""

    def __init__(self, shown: Observer, debate_id: int) -> None:
        self.shown = shown
        self.live = DebateBroadcaster(debate_id)
        self.both = (shown, self.live)

    def step_started(self, debate: Debate, step: Step) -> None:
        for observer in self.both:
            observer.step_started(debate, step)

    def cards_when_saved(self) -> bool:
        return any(observer.cards_when_saved() for observer in self.both)

    def wants_deltas(self, step: Step) -> bool:
        return any(observer.wants_deltas(step) for observer in self.both)

    def delta(self, debate: Debate, step: Step, text: str) -> None:
        for observer in self.both:
            if observer.wants_deltas(step):
                observer.delta(debate, step, text)

    def restart(self, debate: Debate, step: Step) -> None:
        for observer in self.both:
            observer.restart(debate, step)

    def waiting(self, debate: Debate, step: Step, seconds: float, reason: str) -> None:
        for observer in self.both:
            observer.waiting(debate, step, seconds, reason)

    def queued(self, debate: Debate, step: Step, ahead: int) -> None:
        for observer in self.both:
            observer.queued(debate, step, ahead)

    def pace(self, debate: Debate, step: Step, tokens_per_second: float) -> None:
        for observer in self.both:
            observer.pace(debate, step, tokens_per_second)

    async def event_saved(self, debate: Debate, event: Event) -> None:
        for observer in self.both:
            await observer.event_saved(debate, event)

    async def debate_changed(self, debate: Debate) -> None:
        for observer in self.both:
            await observer.debate_changed(debate)

    async def drain(self) -> None:
        for observer in self.both:
            await observer.drain()
