"""The JSON API at /api/v1/ (django-ninja): its authentication, its errors, and its routers.

Every endpoint needs a personal token (`Authorization: Bearer ...`, api/tokens.py) and asks the same
services, selectors and sharing rules (chaoslm/sharing.py) as the pages. Errors are RFC 9457 problems
(api/problems.py): 401 without a valid token, 404 for what the caller may not see, 403 for what it may see
but not change, 422 with every field error at once, 429 with Retry-After past the per-token rate limit.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer

# room_actions and batch_actions also add operations to rooms' and batches' routers (on /rooms/{id} and
# /<kind>s/{id}), so they are imported before any router is added (which copies its operations).
from api import (
    account,
    arenas,
    batch_actions,
    batches,
    debates,
    events,
    format_plans,
    formats,
    hooks,
    polls,
    refusals,
    room_actions,
    room_events,
    rooms,
    share_links,
    tokens,
)
from api.models import ApiToken
from api.problems import ApiError, problem
from api.reference import Reference
from api.schemas import where
from chaoslm import limits

logger = logging.getLogger("chaoslm.api")


class TokenAuth(HttpBearer):
    """A personal API token; the request then acts as its user, for the sharing rules. A read-only token is refused
    every write here, in one place, so that no operation's validation or lookup answers it first."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        found = tokens.authenticate(token)
        if found is None:
            return None
        wait = tokens.retry_after(found)
        if wait is not None:
            raise ApiError(
                429, f"This token made too many calls; try again in {wait} seconds.", headers={"Retry-After": str(wait)}
            )
        # Refused as it is authenticated, before any body is read or anything looked up.
        if found.read_only and request.method in refusals.WRITES:
            raise ApiError(403, "This token is read-only; make a read-write token to change things.")
        request.user = found.user
        return found


class ChaosApi(NinjaAPI):
    """Our API, whose OpenAPI document lists every problem each operation may answer (api/refusals.py)."""

    def get_openapi_schema(self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None) -> Any:
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        return refusals.document(schema)


api = ChaosApi(
    title="ChaosLM API",
    version="1",
    description="Everything the browser does, a script can do. Authenticate with `Authorization: Bearer <token>`; "
    "make a token on your account's API tokens page.",
    auth=TokenAuth(),
    urls_namespace="api",
    docs=Reference(),
    docs_url="/docs",
    openapi_url="/openapi.json",
)


def _location(loc: Any, body: Any, kind: str) -> str:
    # ninja names where a value came from first ("body", "query", "path") and then its parameter; the
    # caller wrote the rest.
    parts = list(loc)
    if parts and parts[0] == "body":
        return where(parts[2:] if len(parts) > 2 else parts[1:], body, kind)
    if parts and parts[0] in {"query", "path", "header"}:
        parts = parts[1:]
    return ".".join(str(p) for p in parts) or "body"


def _body(request: HttpRequest) -> Any:
    try:
        return json.loads(request.body) if request.body else None
    except ValueError:
        return None


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, error: ValidationError) -> HttpResponse:
    body = _body(request)
    errors = [
        {"field": _location(e.get("loc", ()), body, e.get("type", "")), "message": str(e.get("msg", ""))}
        for e in error.errors
    ]
    return problem(422, "The request has invalid fields; each is listed in `errors`.", errors=errors)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, error: AuthenticationError) -> HttpResponse:
    detail = "Send a valid API token: `Authorization: Bearer <token>`."
    return problem(401, detail, headers={"WWW-Authenticate": 'Bearer realm="chaoslm"'})


@api.exception_handler(ApiError)
def _refused(request: HttpRequest, error: ApiError) -> HttpResponse:
    return problem(error.status, error.detail, errors=error.errors, headers=error.headers)


@api.exception_handler(limits.LimitReached)
def _limited(request: HttpRequest, error: limits.LimitReached) -> HttpResponse:
    return problem(429, str(error), headers={"Retry-After": str(error.retry_after)})


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, error: Http404) -> HttpResponse:
    return problem(404, str(error) or "Not found.")


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, error: HttpError) -> HttpResponse:
    return problem(error.status_code, str(error))


@api.exception_handler(Exception)
def _server_error(request: HttpRequest, error: Exception) -> HttpResponse:
    logger.exception("API call %s %s failed", request.method, request.path)
    return problem(500, "Something went wrong on the server; it has been logged.")


api.add_router("", debates.router)
api.add_router("", formats.router)
api.add_router("", events.router)
api.add_router("", hooks.router)
api.add_router("", rooms.router)
api.add_router("", room_events.router)
api.add_router("", batches.router)
api.add_router("", batch_actions.router)
api.add_router("", polls.router)
api.add_router("", room_actions.router)
api.add_router("", arenas.router)
api.add_router("", account.router)
api.add_router("", share_links.router)
api.add_router("", format_plans.router)

# What api/urls.py mounts at /api/v1/ on first use (ninja's app name and namespace are given there, to be known
# before this module is imported).
urlpatterns = api.urls[0]
