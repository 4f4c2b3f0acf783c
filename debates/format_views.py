"""The formats' pages: the list of built-in formats and protocol cards, and a card's page with its plan for
given options (every call in order, who reads what), so a person sees a protocol before running it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from debates import estimates, format_cards
from debates.formats import LISTED, Format
from debates.forms import given_options


def format_list(request: HttpRequest) -> HttpResponse:
    cards = list(format_cards.usable(request.user))
    rows = [(card, format_cards.card_format_of(card)) for card in cards]
    return render(request, "debates/formats/list.html", {"builtins": LISTED.values(), "cards": rows})


@dataclass(frozen=True)
class TimelineRow:
    """One entry of a card's timeline, in words: who acts, what they see and quote, who judges it."""

    ordinal: int
    who: str
    kind: str
    label: str
    visibility: str
    sees: str
    reads: tuple[str, ...]
    judged_by: str
    calls_llm: bool
    phase: str
    when: str = ""  # given only on an earlier answer: which ("only if ... answered 'offer'")


def timeline(fmt: Format, options: dict[str, int]) -> list[TimelineRow]:
    """A card's plan at `options` (built-in formats have none: []), seat keys named by their labels."""
    if not hasattr(fmt, "plan"):
        return []
    labels = {s.key: s.label for s in fmt.seat_specs}
    return [
        TimelineRow(
            ordinal=call.ordinal,
            who=labels.get(call.seat or "", call.seat or "") if call.seat else "System line",
            kind=call.kind,
            label=call.label or call.step.replace("_", " "),
            visibility=call.visibility,
            sees=call.sees,
            reads=tuple(call.reads),
            judged_by=labels.get(call.judged_by or "", call.judged_by or ""),
            calls_llm=call.calls_llm,
            phase=call.phase,
            when=call.when,
        )
        for call in fmt.plan(options)
    ]


def plan_context(fmt: Format, options: dict[str, int]) -> dict[str, Any]:
    """The plan as the page shows it: every call in order, their number, and the time they take at the pace of
    this site's recent calls (none when it has made none yet)."""
    rows = timeline(fmt, options)
    count = fmt.calls(options) if hasattr(fmt, "calls") else sum(r.calls_llm for r in rows)
    # The pace every estimate uses, but no guess: a page about a protocol gives a time it can stand by.
    found = estimates.pace()
    pace = found.seconds if found.measured or found.machine else None
    pace_from = "this site's recent pace" if found.measured else "the embedded model's speed measured on this machine"
    fewest = min(fmt.fewest_calls(options), count)
    return {
        "rows": rows,
        "call_count": count,
        # A debate that may stop early, or skip a speech given only on an answer, makes fewer.
        "fewest_calls": fewest,
        "pace": pace,
        "pace_from": pace_from,
        "minutes": round(count * pace / 60, 1) if pace is not None else None,
        # In words, as every estimate gives it ("under a minute", "about 2 to 4 minutes"), not "0.0 minutes".
        "time": estimates.minutes_between(fewest * pace, count * pace) if pace is not None else "",
    }


def format_detail(request: HttpRequest, name: str) -> HttpResponse:
    card = None
    if name in LISTED:
        fmt: Format = LISTED[name]
    else:
        try:
            card = format_cards.find_card(request.user, name)
        except format_cards.CardNotFound:
            raise Http404("No such format.") from None
        fmt = format_cards.card_format_of(card)
    given = given_options(fmt, request.GET)
    form, options = given.form, given.options
    context = {
        "fmt": fmt,
        "card": card,
        "form": form,
        "options": options,
        "editable": card is not None and format_cards.can_edit(request.user, card),
        "admin_url": reverse("admin:debates_formatcard_change", args=[card.pk])
        if card and request.user.is_staff
        else "",
        "new_url": f"{reverse('debate_new')}?format={fmt.name}",
        **plan_context(fmt, options),
    }
    return render(request, "debates/formats/detail.html", context)
