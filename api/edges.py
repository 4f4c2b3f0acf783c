"""What every call under /api/v1/ passes before an endpoint sees it, and what every answer is made into after.

One place for the API's edges, so that no endpoint can forget one (issue 35's fuzzer found the ones they had):

- No CSRF check: the API takes no session cookie, only `Authorization: Bearer`, so a forged cross-site form has
  nothing to ride on; a POST to an unknown address gets the same 404 problem as a GET, not Django's CSRF page.
- A body must be JSON (`application/json` or `...+json`): anything else is a 415, so a body sent as text/plain is
  never parsed as if it were JSON. It must parse (400) and hold only what the database can store (422, every
  place at once, `where_unstorable`): no NUL character (PostgreSQL refuses it in text), no lone surrogate (no
  UTF-8 encoding exists for one: SQLite's driver and PostgreSQL refuse it), no whole number outside 64 bits
  (the databases' integers), no string past `MAX_STRING_CHARS`. Query strings are held to the same rule.
  The fields' own bounds are tighter (api/schemas.py); this is the floor under every field, typed or not.
- Every error answer is a problem (`application/problem+json`): Django's or ninja's own (a 405 with its `Allow`
  header, a 404, a 400) is rewritten, so a script never gets an HTML page from the API.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin

from api.problems import CONTENT_TYPE, problem

PREFIX = "/api/v1/"
# Answers that are not the API's JSON: its docs page and the schema the page reads.
OWN_PAGES = {PREFIX + "docs", PREFIX + "openapi.json"}
INT64 = (-(2**63), 2**63 - 1)
# Past the longest string any field takes (an experiment's passage, 20,000 characters): refused whatever the
# field, before any model or form reads it.
MAX_STRING_CHARS = 100_000
# No field nests more than a few levels (a tournament's questions: a list of objects); deeper is refused before
# any validator walks it.
MAX_DEPTH = 32
BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def _where(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path) or "body"


def _string_problem(text: str) -> str | None:
    if len(text) > MAX_STRING_CHARS:
        return f"At most {MAX_STRING_CHARS:,} characters; this has {len(text):,}."
    if "\x00" in text:
        return "A text may not contain the NUL character (\\u0000)."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "A text may not contain a lone surrogate (such as \\ud800): it is not a character."
    return None


def where_unstorable(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[str, str]]:
    """Each place in a parsed JSON value holding what no field can store, with why: (where, message)."""
    if len(path) > MAX_DEPTH:
        yield _where(path), f"Nested more than {MAX_DEPTH} deep: no field takes that."
    elif isinstance(value, str):
        if (message := _string_problem(value)) is not None:
            yield _where(path), message
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            yield _where(path), f"A whole number must be from {INT64[0]} to {INT64[1]}."
    elif isinstance(value, float):
        if not math.isfinite(value):
            yield _where(path), "A number must be finite."
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from where_unstorable(item, (*path, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            if (message := _string_problem(key)) is not None:
                yield _where((*path, key)), f"The key: {message}"
            yield from where_unstorable(item, (*path, key))


def _reject_constant(name: str) -> float:
    # json reads NaN and Infinity, which JSON does not have.
    raise ValueError(f"{name} is not JSON")


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or (
        content_type.startswith("application/") and content_type.endswith("+json")
    )


def _invalid(errors: list[tuple[str, str]]) -> HttpResponse:
    listed = [{"field": field, "message": message} for field, message in errors]
    return problem(422, "The request has invalid fields; each is listed in `errors`.", errors=listed)


def check_request(request: HttpRequest) -> HttpResponse | None:
    """The refusal for a call under /api/v1/ that no endpoint should see, or None."""
    errors = []
    for key, values in request.GET.lists():
        errors += [(key, m) for v in values if (m := _string_problem(v)) is not None]
        errors += [(key, f"A whole number must be from {INT64[0]} to {INT64[1]}.") for v in values if _too_big(v)]
    if request.method in BODY_METHODS:
        try:
            body = request.body
        except RequestDataTooBig:
            return problem(413, "The request body is larger than this site accepts.")
        if body:
            if not _is_json(request.content_type or ""):
                shown = request.content_type or "none"
                return problem(415, f"Send the body as JSON (Content-Type: application/json), not {shown}.")
            try:
                data = json.loads(body, parse_constant=_reject_constant)
            except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
                return problem(400, "The request body is not valid JSON.")
            errors += where_unstorable(data)
    return _invalid(errors) if errors else None


def _too_big(text: str) -> bool:
    digits = text.strip().lstrip("+-")
    return digits.isascii() and digits.isdigit() and len(digits) > 18 and not INT64[0] <= int(text) <= INT64[1]


TITLE_DETAILS = {
    400: "The request could not be read.",
    403: "Forbidden.",
    404: "No such endpoint; see /api/v1/docs.",
    405: "This address does not take that method; `Allow` lists the ones it takes.",
    500: "Something went wrong on the server; it has been logged.",
}


def as_problem(response: HttpResponse) -> HttpResponse:
    """An error answer that is not yet a problem, as one: its status, and its `Allow` or `Retry-After` kept."""
    status = response.status_code
    detail = TITLE_DETAILS.get(status, "The request was refused.")
    kept = {name: response[name] for name in ("Allow", "Retry-After", "WWW-Authenticate") if response.has_header(name)}
    if status == 405 and "Allow" in kept:
        detail = f"This address takes {kept['Allow']} only."
    return problem(status, detail, headers=kept)


class ApiEdges(MiddlewareMixin):
    """The checks above, for every call under /api/v1/ (settings.MIDDLEWARE: before CsrfViewMiddleware)."""

    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        if not request.path.startswith(PREFIX):
            return None
        # Tokens only, never the session cookie (api/main.py): nothing for a forged request to ride on.
        request._dont_enforce_csrf_checks = True  # type: ignore[attr-defined]
        return check_request(request)

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if (
            request.path.startswith(PREFIX)
            and request.path not in OWN_PAGES
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith(CONTENT_TYPE)
        ):
            return as_problem(response)
        return response
