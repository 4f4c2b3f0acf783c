"""An event card's HTML, rendered once: when the event is saved (`Event.save` stores it in `Event.html`), or,
for a tournament's match no page watches as it runs, by each page that shows it (`cards_of`).

An event never changes once saved, and its card is the same for every viewer who may read it (private
events show as a closed summary; who may act is CSS keyed on the page, not in the card), so a page or a
catch-up concatenates the stored cards instead of running the template engine per event. Only the
card being written (partials/writing_card.html) renders live, and so does the placeholder a viewer gets
for a private event the owner keeps from them (`hidden_card`, debates/privacy.py).

The event's id is not known until its row is inserted, so the stored card holds `ID_SLOT` where the
id goes, and `card_html` fills in its first occurrence: the opening tag's, since nothing before it in the
card comes from model or user text (only the ordinal, the kind, and the seat's side from the format).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import nh3
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from chaoslm.rendering import ALLOWED_TAGS, markdown_to_html
from debates.formats.quotes import UNVERIFIED_CLOSE, UNVERIFIED_OPEN, VERIFIED_CLOSE, VERIFIED_OPEN, verify

TEMPLATE = "partials/event_card.html"
ID_SLOT = "{event-id}"


def render(event: Any, seat: Any) -> str:
    """The card of `event` (a debates Event) in `seat`, to store: its id is left as `ID_SLOT`."""
    return render_to_string(TEMPLATE, {"event": event, "seat": seat, "event_id": ID_SLOT})


def hidden_card(event: Any, seat: Any) -> str:
    """The placeholder of a private event for a viewer who may not read it: who thought, at which step, no text."""
    return render_to_string(TEMPLATE, {"event": event, "seat": seat, "event_id": event.pk, "hidden": True})


def card_html(event: Any) -> str:
    """The card as a page shows it. Events stored without it (bulk inserts) render here, live."""
    html = event.html or render(event, event.seat)
    return html.replace(ID_SLOT, str(event.pk), 1)


class Card(NamedTuple):
    """A saved event's card as a page lists it: no model instance, no JSON decoded."""

    pk: int
    ordinal: int
    kind: str
    html: str

    def filled(self) -> str:
        return self.html.replace(ID_SLOT, str(self.pk), 1)


def cards_of(events: QuerySet[Any], *, thinking: bool = True) -> list[Card]:
    """The stored cards of `events`, in order, in one query (two if some were stored without theirs, or if
    private events are shown without their text: `thinking` false)."""
    rows = list(events.values_list("pk", "ordinal", "kind", "html", "visibility"))
    cards = [Card(pk, ordinal, kind, html) for pk, ordinal, kind, html, _ in rows]
    hidden = set() if thinking else {pk for pk, *_, visibility in rows if visibility == "private"}
    missing = [card.pk for card in cards if not card.html or card.pk in hidden]
    if missing:
        rendered = {
            e.pk: hidden_card(e, e.seat) if e.pk in hidden else render(e, e.seat)
            for e in events.model.objects.select_related("seat", "debate").filter(pk__in=missing)
        }
        cards = [card._replace(html=rendered[card.pk]) if card.pk in rendered else card for card in cards]
    return cards


# The quote marks as Markdown leaves them (escaped: raw HTML is off), and what a card draws instead.
_QUOTE_MARKS = {
    VERIFIED_OPEN: '<mark class="quote verified" title="Verified: these words are in the passage">',
    UNVERIFIED_OPEN: '<mark class="quote unverified" title="Unverified: not found in the passage">',
    VERIFIED_CLOSE: "</mark>",
    UNVERIFIED_CLOSE: "</mark>",
}


def marked_html(marked: str) -> SafeString:
    """A speech already marked by `verify` (debates/formats/quotes.py) as sanitized HTML, each mark a <mark>. The
    arena redacts names from the marked text, so a quote stays verified or not as the judge read it."""
    html = str(markdown_to_html(marked))
    for mark, tag in _QUOTE_MARKS.items():
        html = html.replace(mark.replace("<", "&lt;").replace(">", "&gt;"), tag)
    allowed = {"a": {"href", "title"}, "mark": {"class", "title"}}
    return mark_safe(nh3.clean(html, tags=ALLOWED_TAGS | {"mark"}, attributes=allowed))  # noqa: S308 - nh3 just above


def quoted_html(text: str, passage: str) -> SafeString:
    """An evidence speech as its card shows it: Markdown, each quote marked verified or unverified as the judge
    reads it (debates/formats/quotes.py), and the speech's counts. Only the format's marks become tags (a
    speaker's own are re-checked by `verify`), and the result is sanitized again, so a quote that spans
    paragraphs cannot leave a tag open."""
    checked = verify(passage, text)
    html = str(marked_html(checked.marked))
    if checked.made:
        html += (
            f'<p class="quote-counts muted">{checked.made} quote{"s" if checked.made != 1 else ""}: '
            f"{checked.verified} verified, {checked.unverified} unverified</p>"
        )
    return mark_safe(html)  # noqa: S308 - sanitized by nh3 just above; the counts are numbers
