"""Small HTTP helpers every app uses: numbers and ids from forms and URLs, and short replies that are safe to show.

Every whole number a request carries is read by `parse_number`: ASCII digits only. A superscript ("²" passes
`str.isdigit` but not `int`), a fraction ("½"), another script's digit ("٣", which `int` reads), an exponent
("1e3") or a number past the field's range is refused with a message, never left to raise (a 500) in a
query or an `int()`. Databases store ids as signed 64-bit integers: `parse_id` keeps ids within them.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.urls import register_converter
from django.utils.html import escape

MAX_ID = 2**63 - 1
# Twenty digits hold every 64-bit number; a longer run of digits is refused before `int` reads it.
WHOLE = re.compile(r"-?[0-9]{1,20}")


class NumberError(ValueError):
    """A number in a request that cannot be read or is out of range; the message says so, for the person."""


def parse_number(value: object, what: str, *, low: int = 0, high: int = MAX_ID) -> int:
    """The whole number from `low` to `high` written in `value` (ASCII digits, a leading minus sign, spaces around).

    `what` names the number in the refusal: "Bob's talkativeness must be a whole number from 0 to 100, not '²'."
    """
    text = value.strip() if isinstance(value, str) else ""
    if WHOLE.fullmatch(text) and low <= (number := int(text)) <= high:
        return number
    shown = text if len(text) <= 20 else text[:20] + "…"
    raise NumberError(f"{what} must be a whole number from {low} to {high}, not {shown!r}.")


def parse_id(value: object) -> int | None:
    """The positive database id written in `value`, or None when it is not one."""
    try:
        return parse_number(value, "An id", low=1)
    except NumberError:
        return None


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


class IdChoices(forms.ModelMultipleChoiceField):
    """A form's many-ids field (personas to tick, agents to name) whose every value is an id the database can hold
    before it is looked up: Django's own asks the database with `pk__in`, which a number past 64 bits breaks
    (a 500 on SQLite) where one id alone would only not be found."""

    def _check_values(self, value: Any) -> Any:
        for pk in value:
            if parse_id(str(pk)) is None:
                raise ValidationError(
                    self.error_messages["invalid_pk_value"], code="invalid_pk_value", params={"pk": pk}
                )
        return super()._check_values(value)


def message_reply(text: str, status: int) -> HttpResponse:
    """A short message for the person (an error, a refusal), HTML-escaped.

    HTMX swaps replies into the page as HTML, and a plain form post shows them as a page, so a
    message that names a persona or quotes what someone typed must never carry live markup.
    """
    return HttpResponse(escape(text), status=status, content_type="text/html; charset=utf-8")


register_converter(IdConverter, "id")
