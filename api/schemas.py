"""The API's input types: a body is a JSON object with known keys only (`chaoslm.schemas.Input`), and every field
has its bound.

Each bound is the one the page's form and the command line's spec hold (`bounds` names where each comes from),
so a value a script sends is refused for the same reason, with the same number, as one typed on the page; the
schema shows it (`maxLength`, `minimum`, `maximum`), and pydantic checks it before any model or form reads the
value. Beneath these, api/edges.py refuses what no field can store (NUL, lone surrogates, numbers past 64
bits) for every field, typed or not.
"""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from ninja import Field

from chaoslm.http import MAX_ID

# An id in a body, in the range ids have (a path's are checked by its converter, chaoslm/http.py).
Id = Annotated[int, Field(ge=1, le=MAX_ID)]


# A debate's material beyond its topic, at the bound the form and the command line hold (debates/setup.py).
Material = Annotated[
    str,
    Field(
        max_length=settings.CHAOSLM_MAX_MATERIAL,
        description="What the debate carries beyond its topic (a passage, a question with its candidate answers, "
        "a case file); a card's prompts quote it.",
    ),
]


# pydantic's error types about a key itself, the last part of their `loc`.
KEY_ERRORS = {"missing", "extra_forbidden"}


def where(loc: tuple[Any, ...] | list[Any], data: Any, kind: str = "") -> str:
    """The place in the body `data` a pydantic error's `loc` names, as "questions.0.topic": pydantic also names
    the member of a union it tried ("questions.0.QuestionIn.topic", "seats.a.int"), which is no place a client
    wrote, so a part is kept only where it indexes into the body (or names a missing or unknown key: `kind`, the
    error's type, says so)."""
    parts: list[str] = []
    current = data
    for index, part in enumerate(loc):
        if (isinstance(current, dict) and part in current) or (
            isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        ):
            current = current[part]
        elif index != len(loc) - 1 or not isinstance(current, dict) or kind not in KEY_ERRORS:
            continue
        parts.append(str(part))
    return ".".join(parts) or "body"
