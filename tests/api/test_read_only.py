"""A read-only token changes nothing, and learns nothing of a write: every write operation in the OpenAPI document
(POST, PUT, PATCH, DELETE) refuses it with 403 before it reads the body or looks anything up. The operations are
walked from the document, as tests/api/test_parity.py walks the routes, so a new one is covered as it is added."""

from __future__ import annotations

import json
import re

import pytest

from api.main import api
from api.refusals import WRITES
from api.tokens import create_token
from debates.models import Debate

pytestmark = pytest.mark.django_db

READ_ONLY = "This token is read-only; make a read-write token to change things."
# A body no operation takes: a read-write token gets its 422 (or a lookup's 404) for it.
BAD_BODY = json.dumps({"not a field": [None]})


DOCUMENT = api.get_openapi_schema()
# A path parameter's value that nothing has: a lookup would answer 404.
NOTHING = {"kind": "nobody", "name": "nobody", "token": "nobody"}


def _writes() -> list[tuple[str, str, str]]:
    """(method, path in the document, path called) of every write operation."""
    found = []
    for path, operations in DOCUMENT["paths"].items():
        for method in operations:
            if method.upper() in WRITES:
                called = re.sub(r"\{(\w+)\}", lambda m: NOTHING.get(m.group(1), "987654"), path)
                found.append((method, path, called))
    return found


WRITE_OPERATIONS = _writes()


def test_the_document_has_every_write_operation():
    # The probe counted 62; fewer here means the walk missed some.
    assert len(WRITE_OPERATIONS) >= 62, WRITE_OPERATIONS


@pytest.fixture
def secrets(people):
    return {
        "read": create_token(people["owner"], "read", read_only=True)[1],
        "write": create_token(people["owner"], "write", read_only=False)[1],
    }


@pytest.mark.parametrize(
    ("method", "template", "path"), WRITE_OPERATIONS, ids=[f"{m.upper()} {t}" for m, t, _ in WRITE_OPERATIONS]
)
def test_a_read_only_token_is_refused_every_write_before_its_body_or_a_lookup(client, secrets, method, template, path):
    def call(secret: str):
        return client.generic(
            method.upper(), path, BAD_BODY, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {secret}"
        )

    refused = call(secrets["read"])
    assert refused.status_code == 403, refused.content[:300]
    assert refused["Content-Type"] == "application/problem+json"
    assert refused.json()["detail"] == READ_ONLY
    # The same call with a read-write token gets past the token: its answer is the body's or the lookup's.
    allowed = call(secrets["write"])
    assert allowed.json().get("detail") != READ_ONLY
    # And the document lists the 403 it answers.
    assert "403" in {str(code) for code in DOCUMENT["paths"][template][method]["responses"]}


def test_a_read_only_token_still_reads(client, people, secrets):
    Debate.objects.create(topic="Seen", owner=people["owner"])
    reply = client.get("/api/v1/debates", HTTP_AUTHORIZATION=f"Bearer {secrets['read']}")
    assert reply.status_code == 200
    assert [d["topic"] for d in reply.json()["results"]] == ["Seen"]
