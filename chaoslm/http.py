"""Small HTTP helpers every app uses: ids from forms and URLs, and short replies that are safe to show.

Databases store ids as signed 64-bit integers: a longer number, a non-ASCII digit ("²" passes
`str.isdigit` but not `int`) or a fraction must be refused before it reaches a query, where it would
raise (a 500) instead of answering with a message.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import register_converter
from django.utils.html import escape

MAX_ID = 2**63 - 1


def parse_id(value: object) -> int | None:
    """The positive database id written in `value`, or None when it is not one."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit() or len(value) > 19:
        return None
    number = int(value)
    return number if 0 < number <= MAX_ID else None


class IdConverter:
    """`<id:pk>` in URL patterns: an id that fits the database, so a longer number is a 404, not a 500."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = parse_id(value)
        if number is None:
            raise ValueError(value)  # Django's resolver takes this as "no match": a 404
        return number

    def to_url(self, value: int) -> str:
        return str(value)


def message_reply(text: str, status: int) -> HttpResponse:
    """A short message for the person (an error, a refusal), HTML-escaped.

    HTMX swaps replies into the page as HTML, and a plain form post shows them as a page, so a
    message that names a persona or quotes what someone typed must never carry live markup.
    """
    return HttpResponse(escape(text), status=status, content_type="text/html; charset=utf-8")


register_converter(IdConverter, "id")
