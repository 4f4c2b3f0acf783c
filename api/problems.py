"""Errors as RFC 9457 problem details: `application/problem+json`, every field error at once."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse

CONTENT_TYPE = "application/problem+json"

TITLES = {
    400: "Bad request",
    401: "Not authenticated",
    402: "Payment required",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Content too large",
    422: "Invalid input",
    429: "Too many requests",
    500: "Server error",
}


class ApiError(Exception):
    """Raised by an endpoint: answered as a problem with `status` and `detail`."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors
        self.headers = headers or {}


def problem(
    status: int, detail: str, *, errors: list[dict[str, Any]] | None = None, headers: dict[str, str] | None = None
) -> HttpResponse:
    body: dict[str, Any] = {"type": "about:blank", "title": TITLES.get(status, "Error"), "status": status}
    body["detail"] = detail
    if errors is not None:
        body["errors"] = errors
    try:
        content = json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate the client sent, quoted back: written as its escape
        content = json.dumps(body).encode()
    response = HttpResponse(content, status=status, content_type=CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def unknown(request: HttpRequest, rest: str) -> HttpResponse:
    """Any other address under /api/v1/: a problem, never the site's HTML 404 page."""
    return problem(404, "No such endpoint; see /api/v1/docs.")
