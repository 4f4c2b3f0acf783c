"""The API fuzzed from its own OpenAPI document (schemathesis), in process: for every operation, requests that fit
the schema and requests that break it, each answer checked against the document. A 5xx, a status code the
operation does not list, a content type or a body that is not what the document says, fails.

Bounded to stay a small part of `make test`: a fixed number of examples per operation and per mode, derandomized
(the same requests each run, so a failure is reproducible). The figures (requests made, 5xx, schema failures)
are printed for the issue's note: run with `-s` to see them.

The event streams are left out: they stay open while what they follow runs (their own tests, test_events and
the batches' and rooms' tests, drive them). Nothing runs in the background: the test's transaction never commits,
so a debate or a tournament the fuzzer makes is saved but never started.
"""

from __future__ import annotations

import collections
import os

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.main import api
from api.tokens import create_token
from debates.models import Debate
from rooms.models import Room

pytestmark = pytest.mark.django_db

# Per operation and mode: 2 modes x 5 x 51 operations, about 500 requests. CHAOSLM_FUZZ_EXAMPLES=50 for a
# longer search by hand.
EXAMPLES = int(os.environ.get("CHAOSLM_FUZZ_EXAMPLES", "5"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture
def wsgi_app():
    """The site as a WSGI application, keeping the test's database connection open between requests: Django's
    handler closes it at each request's end (as Django's test client, this one does not)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def fuzzed(people, settings):
    """Personas to name, a debate and a room of the caller's at ids 1 and up (the fuzzer's favourite numbers),
    and a read-write token with room for every call."""
    settings.CHAOSLM_API_CALLS_PER_MINUTE = 0
    settings.CHAOSLM_STARTS_PER_MINUTE = 10_000
    call_command("import_personas", "personas/samples/", verbosity=0)
    Debate.objects.create(topic="Fuzzed", owner=people["owner"])
    Room.objects.create(title="Fuzzed", owner=people["owner"])
    _, secret = create_token(people["owner"], "fuzz", read_only=False)
    return secret


def test_the_api_answers_as_its_schema_says(fuzzed, wsgi_app, capsys):
    schema = schemathesis.openapi.from_dict(api.get_openapi_schema())
    schema.app = wsgi_app
    headers = {"Authorization": f"Bearer {fuzzed}"}
    figures: collections.Counter[str] = collections.Counter()
    failures: list[str] = []

    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.endswith("/events"):
            continue
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                derandomize=True,
                database=None,
                deadline=None,
                suppress_health_check=list(HealthCheck),
            )
            def run(case) -> None:
                response = case.call(headers=headers)
                figures["requests"] += 1
                if response.status_code >= 500:
                    figures["5xx"] += 1
                try:
                    case.validate_response(response, checks=CHECKS)
                except (AssertionError, FailureGroup) as failure:
                    figures["schema failures"] += 1
                    if len(failures) < 20:
                        body = response.content[:300].decode("utf-8", "replace")
                        failures.append(
                            f"{case.method} {case.formatted_path} -> {response.status_code} {body}\n{failure}"
                        )

            run()
            figures["operations"] += mode == GenerationMode.POSITIVE

    with capsys.disabled():
        print(
            f"\nfuzz: {figures['operations']} operations, {figures['requests']} requests, "
            f"{figures['5xx']} 5xx, {figures['schema failures']} schema failures"
        )
    assert figures["requests"] > 0
    assert not failures, "\n\n".join(failures)
