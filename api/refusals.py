"""The problems an operation may answer, as its OpenAPI responses. Apart from api/problems.py, which the URLconf
imports (the problem any other address under /api/v1/ gets) while django-ninja loads only with the endpoints.

An endpoint names the refusals of its own (`refusals(403, 409)`); `document` adds those every operation of its
shape can get from the API's edges (api/edges.py, api/main.py) and gives each its true content type,
`application/problem+json`, with the Problem schema, so the document says what a client will be answered."""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema

from api.problems import CONTENT_TYPE, TITLES

# The methods that change something: a read-only token is refused them all (api/main.py's TokenAuth).
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class FieldError(Schema):
    field: str
    message: str
    line: int | None = Field(None, description="A protocol card's problem: its line in the card's YAML")


class Problem(Schema):
    """An RFC 9457 problem: what went wrong, and for invalid input every field's error."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[FieldError] | None = None


def refusals(*codes: int) -> dict[int, type[Problem]]:
    """An operation's problem responses: every one may answer 401 (no valid token) and 429 (rate limit)."""
    return {code: Problem for code in (401, 429, *codes)}


PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
WHY = {
    400: "The body is not valid JSON",
    401: "No valid token (`Authorization: Bearer <token>`)",
    403: "You may see it but not change it, or the token is read-only",
    404: "Nothing there that you may see",
    409: "Its state does not allow that now",
    413: "The body is larger than the site accepts",
    415: "The body is not JSON",
    422: "Invalid input: every field's problem in `errors`",
    429: "Too many calls or starts: wait `Retry-After` seconds",
}
RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before trying again", "schema": {"type": "integer"}}}


def _implied(method: str, operation: dict[str, Any]) -> set[int]:
    """The refusals an operation gets from its shape: a token (401) and its rate (429) always; a write, a read-only
    token (403); with parameters or a body, invalid input (422); with a path parameter, 404; with a body, 400, 413
    and 415."""
    codes = {401, 429}
    if method.upper() in WRITES:
        codes.add(403)
    parameters = operation.get("parameters", [])
    if parameters or "requestBody" in operation:
        codes.add(422)
    if any(p.get("in") == "path" for p in parameters):
        codes.add(404)
    if "requestBody" in operation:
        codes |= {400, 413, 415}
    return codes


def document(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (ninja's OpenAPI document) with every operation's problem responses listed, as problem+json."""
    schema.setdefault("components", {}).setdefault("schemas", {})
    schema["components"]["schemas"].setdefault("Problem", Problem.json_schema())
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for code in _implied(method, operation):
                responses.setdefault(code, {})
            for code in list(responses):
                if int(code) < 400:
                    continue
                response = {
                    "description": WHY.get(int(code), TITLES.get(int(code), "Refused")),
                    "content": {CONTENT_TYPE: {"schema": PROBLEM_REF}},
                }
                if int(code) == 429:
                    response["headers"] = RETRY_AFTER
                responses[code] = response
    return schema
