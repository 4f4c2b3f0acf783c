"""The OpenAPI schema: valid (openapi-spec-validator), every operation summarized with typed responses, and
every URL under /api/v1/ in it, so an endpoint added without being described fails here."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from openapi_spec_validator import validate

from api.main import api
from api.problems import unknown

# Not operations: ninja's root, the schema itself and its docs page (and the problem any other address gets).
NOT_OPERATIONS = {"/api/v1/", "/api/v1/openapi.json", "/api/v1/docs"}


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(json.dumps(api.get_openapi_schema()))


def test_the_schema_is_valid_openapi(schema):
    validate(schema)


def test_every_operation_has_a_summary_and_typed_responses(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation.get("summary"), f"{method} {path} has no summary"
            assert operation.get("tags"), f"{method} {path} has no tag"
            for code, response in operation["responses"].items():
                if code == "204":
                    continue
                content = response.get("content", {})
                assert content, f"{method} {path} {code} has no typed body"
                assert all("schema" in c for c in content.values()), f"{method} {path} {code}"
            assert {"401", "429"} <= set(operation["responses"]), f"{method} {path} lists no auth refusals"


def _routes(patterns: list, prefix: str = "") -> set[str]:
    found: set[str] = set()
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            found |= _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and route.startswith("api/v1/") and pattern.callback is not unknown:
            found.add("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route))
    return found


def test_every_url_under_the_api_is_in_the_schema(schema):
    resolve("/api/v1/")  # the endpoints' patterns load on first use (api/urls.py)
    served = _routes(get_resolver().url_patterns) - NOT_OPERATIONS
    assert served, "no API URL found"
    assert served == set(schema["paths"])


def test_the_schema_exports_from_the_command_line(schema):
    out = StringIO()
    call_command("export_openapi_schema", "--api", "api.main.api", stdout=out)
    assert json.loads(out.getvalue())["paths"] == schema["paths"]
