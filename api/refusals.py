"""The problems an operation may answer, as its OpenAPI responses. Apart from api/problems.py, which the URLconf
imports (the problem any other address under /api/v1/ gets) while django-ninja loads only with the endpoints."""

from __future__ import annotations

from ninja import Schema


class Problem(Schema):
    """An RFC 9457 problem: what went wrong, and for invalid input every field's error."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[dict[str, str | int]] | None = None


def refusals(*codes: int) -> dict[int, type[Problem]]:
    """An operation's problem responses: every one may answer 401 (no valid token) and 429 (rate limit)."""
    return {code: Problem for code in (401, 429, *codes)}
