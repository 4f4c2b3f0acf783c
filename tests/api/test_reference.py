"""The API's reference page (/api/v1/docs), written from the OpenAPI document: every operation with its parameters,
request body and answers, every schema with its fields, each type linked to its schema, all of it escaped."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.utils.html import escape

from api.main import api

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(json.dumps(api.get_openapi_schema()))


@pytest.fixture
def page() -> str:
    response = Client().get("/api/v1/docs")
    assert response.status_code == 200
    return response.content.decode()


def test_every_operation_and_schema_is_on_the_page_and_listed_at_its_top(schema, page):
    toc, body = page.split('<nav class="api-toc"')[1].split("</nav>", 1)
    count = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            anchor = f"op-{operation['operationId']}"
            count += 1
            assert f'<a href="#{anchor}"><span class="method">{method.upper()}</span><code>{path}</code></a>' in toc
            assert (
                f'<h3 id="{anchor}-title"><span class="method">{method.upper()}</span> <code>{path}</code><br>' in body
            )
            assert escape(operation["summary"]) in body.split(f'id="{anchor}"')[1].split("</article>")[0]
    assert count > 90 and body.count('<article class="card api-op" id="op-') == count
    for name in schema["components"]["schemas"]:
        assert f'<h3 id="schema-{name}-title">{name}</h3>' in body
    # Every link inside the page leads somewhere on it.
    ids = set(re.findall(r' id="([^"]+)"', page))
    assert {href for href in re.findall(r'href="#([^"]+)"', page)} - ids == {"content"} - ids


def test_an_operation_shows_its_parameters_body_and_answers_with_their_types(page):
    create = page.split('id="op-api_debates_create_debate"')[1].split("</article>")[0]
    assert "<h3" in create and "Create and start a debate" in create
    assert (
        "<p>The new-debate form's rules and messages: the same validation, the same start limits. Options left out take"
        in create
    )
    assert '<code>application/json</code>: <a href="#schema-DebateIn">DebateIn</a>' in create
    assert (
        "<li><strong>422</strong> Invalid input: every field&#x27;s problem in <code>errors</code>: "
        '<code>application/problem+json</code> <a href="#schema-Problem">Problem</a>'
    ) in create
    assert "<strong>401</strong> No valid token (<code>Authorization: Bearer &lt;token&gt;</code>)" in create
    listing = page.split('id="op-api_debates_list_debates"')[1].split("</article>")[0]
    assert (
        '<li><code>scope</code> <span class="muted">in the query, optional</span>: string: one of <code>mine</code>, '
        "<code>public</code>; default &quot;mine&quot;</li>"
    ) in listing
    assert '<span class="muted">Header</span> <code>Retry-After</code>: Seconds to wait before trying again' in listing
    debate_in = page.split('id="schema-DebateIn"')[1].split("</article>")[0]
    assert (
        '<li><code>topic</code> <span class="muted">required</span>: string; at most 500 characters</li>' in debate_in
    )
    problem = page.split('id="schema-Problem"')[1].split("</article>")[0]
    assert (
        '<code>errors</code> <span class="muted">optional</span>: array of <a href="#schema-FieldError">FieldError</a>'
        " or null"
    ) in problem
