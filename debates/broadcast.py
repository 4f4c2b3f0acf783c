"""Rendering a debate's visual units, and pushing them live while the engine runs.

The same partials draw the full page and every push: an event card, the card being written, the
score chart, the verdict box, the status line. Pushes are hx-swap-oob fragments, and card pushes are
idempotent: the page's `upsert` swap (static/js/chaoslm.js) replaces a card with the same id or else
appends it, and cards are laid out by their ordinal (CSS `order`), so a page that receives an event
twice, or late, still shows it once, in place. Tokens go through the `tokens` swap, which appends to
the card being written if the page has it and drops them quietly if not (the saved card follows).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.template.loader import render_to_string

from chaoslm import live
from debates.cards import card_html
from debates.engine import Observer
from debates.formats import Step
from debates.models import Debate, Event, Seat
from debates.selectors import page_state, score_chart, usage_context


def card_push(event: Event) -> str:
    return live.upsert(card_html(event), "#transcript")


def status_html(debate: Debate, thinking: Sequence[str] = (), waiting: str = "", stage: str = "") -> str:
    return render_to_string(
        "partials/status.html",
        {"debate": debate, "thinking": thinking, "waiting": waiting, "stage": stage, "oob": True},
    )


def live_parts_html(debate: Debate, with_cards_since: int | None = None, state: dict[str, Any] | None = None) -> str:
    """The chart, verdict, usage and controls as they stand, and optionally every card after an event id.

    `state` is the debate's `page_state`, if the caller has just loaded it.
    """
    state = page_state(debate) if state is None else state
    parts = []
    if with_cards_since is not None:
        cards = (card for card in state["events"] if card.pk > with_cards_since)
        parts.extend(live.upsert(card.filled(), "#transcript") for card in cards)
    for template in ("partials/score_chart.html", "partials/verdict.html", "partials/usage.html"):
        parts.append(render_to_string(template, {**state, "oob": True}))
    parts.append(status_html(debate, stage=state["stage"]))
    return "".join(parts)


def catch_up_html(debate_id: int, since_id: int) -> str:
    """What a (re)connecting page needs: every card it may have missed, and the live parts as they stand.

    Many spectators arriving at once ask for the same thing, so the HTML is cached under a key that
    changes with every event and every status change.
    """
    debate = Debate.objects.get(pk=debate_id)
    latest = debate.events.order_by("-pk").values_list("pk", flat=True).first() or 0
    key = f"catch-up:{debate_id}:{since_id}:{latest}:{debate.status}:{debate.is_ending}:{debate.updated_at.timestamp()}"
    html = cache.get(key)
    if html is None:
        html = live_parts_html(debate, with_cards_since=since_id)
        cache.set(key, html, 60)
    return html


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
        self.group = live.debate_group(debate_id)
        self.outbox = live.Outbox(self.group, "#transcript")
        self.thinking: dict[int, str] = {}
        self.seats: dict[int, Seat] = {}
        self.seat_names: dict[str, str] = {}
        self.scores: list[Event] = []
        self.tokens: dict[int, list[int]] = {}  # seat id -> [in, out]
        self.stage = ""
        self.loaded = False
        # Until then (time.monotonic()), the page of whoever started the debate may be opening: set as a run
        # starts, for a debate with an owner that is not a tournament's match.
        self.page_opening_until = 0.0
        self.started = False

    def _send(self, html: str) -> None:
        self.outbox.html(html)

    def _watched(self) -> bool:
        return live.has_audience(self.group)

    async def drain(self) -> None:
        """Send what is left; the engine calls this before it returns."""
        await self.outbox.drain()

    def _live_parts(self, debate: Debate) -> str:
        state = page_state(debate)
        if not self.loaded:
            self.seats = {s.pk: s for s in state["seats"]}
            self.seat_names = {s.key: s.name for s in state["seats"]}
            self.scores = state["scores"]
            self.tokens = {seat.pk: [tokens_in, tokens_out] for seat, tokens_in, tokens_out in state["seat_usage"]}
            self.loaded = True
        return live_parts_html(debate, state=state)

    def _usage_html(self) -> str:
        seat_usage = [(seat, *self.tokens.get(seat.pk, (0, 0))) for seat in self.seats.values() if not seat.is_human]
        return render_to_string("partials/usage.html", {**usage_context(seat_usage), "oob": True})

    # -- engine hooks -----------------------------------------------------------------------------
    def _thinking(self) -> list[str]:
        return sorted(set(self.thinking.values()))

    def step_started(self, debate: Debate, step: Step) -> None:
        name = self.seat_names.get(step.seat or "", step.seat or "")
        self.thinking[step.ordinal] = name
        if not self._watched():
            return
        if step.kind != "INTERNAL":
            card = render_to_string("partials/writing_card.html", {"step": step, "name": name})
            self._send(live.upsert(card, "#transcript"))
        self._send(status_html(debate, self._thinking(), stage=self.stage))

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

    def delta(self, debate: Debate, step: Step, text: str) -> None:
        if self._watched():
            self.outbox.tokens(f"ev-{step.ordinal}-text", text)

    def restart(self, debate: Debate, step: Step) -> None:
        if self._watched():
            self.outbox.reset(f"ev-{step.ordinal}-text")

    def waiting(self, debate: Debate, step: Step, seconds: float, reason: str) -> None:
        if self._watched():
            self._send(status_html(debate, self._thinking(), f"{reason}: trying again in {seconds:.0f}s", self.stage))

    async def event_saved(self, debate: Debate, event: Event) -> None:
        await live.look_for_audience(self.group)
        self.thinking.pop(event.ordinal, None)
        if event.kind == Event.Kind.SYSTEM:
            self.stage = event.data.get("status", "")
        watched = self._watched()
        if not self.loaded:
            if not watched:
                return  # the state loads, this event included, when a page first watches
            # The engine announces the debate first; this is only a fallback.
            self._send(await sync_to_async(self._live_parts)(debate))
        else:
            if event.seat_id in self.seats and (event.tokens_in or event.tokens_out):
                counts = self.tokens.setdefault(event.seat_id, [0, 0])
                counts[0] += event.tokens_in
                counts[1] += event.tokens_out
            if event.kind == Event.Kind.SCORE:
                self.scores.append(event)
                if watched:
                    seats = list(self.seats.values())
                    context = {"chart": score_chart(seats, self.scores), "has_judge": True, "oob": True}
                    self._send(render_to_string("partials/score_chart.html", context))
            if watched and event.tokens_out and event.kind != Event.Kind.INTERNAL:
                self._send(self._usage_html())
        if event.kind == Event.Kind.INTERNAL or not watched:
            return
        # The seat from the loaded ones: rendering the card then needs no query, so it runs right here.
        event.seat = self.seats.get(event.seat_id)
        self._send(card_push(event))
        self._send(status_html(debate, self._thinking(), stage=self.stage))

    async def debate_changed(self, debate: Debate) -> None:
        await live.look_for_audience(self.group)
        if not self.started:
            self.started = True
            if debate.owner_id is not None and not debate.in_batch:
                self.page_opening_until = time.monotonic() + PAGE_OPENING_SECONDS
        if debate.status != Debate.Status.RUNNING:
            self.thinking.clear()
        if self._watched():
            self._send(await sync_to_async(self._live_parts)(debate))
