"""The API at its edges, through Django's test client (the same middleware and handlers as the server): what no
endpoint should see is refused before it does, with a problem; nothing an outside script sends gets a 500 or an
HTML page; every bound is the same on the API as on the form and the command line's spec."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from api.models import Webhook
from api.tokens import create_token
from batches.spec import MAX_NAME_CHARS
from debates.models import Debate
from personas.models import Persona
from rooms.models import Room
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


@pytest.fixture
def call(client, people):
    """A call as a script makes it: the owner's read-write token, the body sent as JSON unless told otherwise."""
    _, secret = create_token(people["owner"], "edges", read_only=False)

    def send(method: str, path: str, body: object = None, *, raw: bytes | None = None, content_type: str = ""):
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        kind = content_type or ("application/json" if data else "")
        return client.generic(method, "/api/v1" + path, data, content_type=kind, HTTP_AUTHORIZATION=f"Bearer {secret}")

    return send


def problem_of(reply, status: int) -> dict:
    assert reply.status_code == status, reply.content[:500]
    assert reply["Content-Type"] == PROBLEM
    body = reply.json()
    assert body["status"] == status and body["detail"]
    return body


def fields(body: dict) -> dict[str, str]:
    return {e["field"]: e["message"] for e in body.get("errors") or []}


# -- every answer under /api/v1/ is a problem ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/"), ("GET", "/nothing/here"), ("POST", "/nothing/here"), ("DELETE", "/nothing"), ("PUT", "/")],
)
def test_an_unknown_address_is_a_404_problem_whatever_the_method(call, method, path):
    problem_of(call(method, path), 404)


def test_a_post_to_an_unknown_address_without_a_token_is_no_csrf_page(client):
    reply = client.post("/api/v1/nothing", "{}", content_type="application/json")
    problem_of(reply, 404)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("PUT", "/debates", {"GET", "POST"}), ("POST", "/personas", {"GET"}), ("GET", "/debates/1/end", {"POST"})],
)
def test_a_wrong_method_is_a_405_problem_with_allow(call, method, path, allowed):
    reply = call(method, path, {} if method != "GET" else None)
    problem_of(reply, 405)
    assert set(reply["Allow"].replace(" ", "").split(",")) == allowed


def test_a_token_call_needs_no_csrf_token(client, people):
    _, secret = create_token(people["owner"], "csrf", read_only=False)
    client.handler.enforce_csrf_checks = True
    debate = Debate.objects.create(topic="No CSRF needed", owner=people["owner"])
    reply = client.patch(
        f"/api/v1/debates/{debate.pk}",
        json.dumps({"visibility": "public"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert reply.status_code == 200, reply.content
    assert Debate.objects.get(pk=debate.pk).visibility == "public"
    # The site's forms still need theirs.
    client.force_login(people["owner"])
    assert client.post("/account/tokens/", {"name": "x"}).status_code == 403


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_a_body_that_is_not_json_is_a_415(call, content_type):
    body = problem_of(call("POST", "/rooms", raw=b'{"title": "Plain"}', content_type=content_type), 415)
    assert "application/json" in body["detail"]
    assert not Room.objects.exists()


def test_a_body_that_does_not_parse_is_a_400(call):
    problem_of(call("POST", "/rooms", raw=b'{"title": '), 400)
    problem_of(call("POST", "/rooms", raw=b'{"title": NaN}'), 400)
    problem_of(call("POST", "/rooms", raw=b"\xff\xfe"), 400)


# -- no input gets a 500 ---------------------------------------------------------------------------------------
BIG = 10**30


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/rooms", {"title": "Big", "personas": [BIG]}, "personas.0"),
        ("POST", "/rooms", {"title": "Big", "template": BIG}, "template"),
        ("POST", "/debates", {"topic": "Big", "seats": {"a": BIG}}, "seats.a"),
        ("POST", "/debates", {"topic": "Big", "options": {"turns": -BIG}}, "options.turns"),
        ("POST", "/tournaments", {"name": "Big", "repeats": BIG}, "repeats"),
        ("POST", "/experiments", {"name": "Big", "concurrency": BIG}, "concurrency"),
    ],
)
def test_a_number_past_64_bits_anywhere_in_a_body_is_a_422(call, method, path, body, field):
    errors = fields(problem_of(call(method, path, body), 422))
    assert errors[field] == f"A whole number must be from {-(2**63)} to {2**63 - 1}."


@pytest.mark.parametrize(
    "path",
    [
        f"/debates/{BIG}",
        f"/rooms/{BIG}/agents/1",
        f"/tournaments/{BIG}",
        f"/webhooks/{BIG}/deliveries",
        "/debates/-1",
        "/personas/1e3",
    ],
)
def test_an_id_past_64_bits_in_a_path_is_a_404(call, path):
    problem_of(call("GET", path), 404)


def test_a_number_past_64_bits_in_a_query_is_a_422(call):
    assert "page" in fields(problem_of(call("GET", f"/debates?page={BIG}"), 422))
    assert "after" in fields(problem_of(call("GET", f"/debates/1/events?after={BIG}"), 422))


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "nul\x00here"])
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/debates", lambda t: {"topic": t}, "topic"),
        ("/rooms", lambda t: {"title": t}, "title"),
        ("/tournaments", lambda t: {"name": "T", "questions": [{"topic": t}]}, "questions.0.topic"),
        ("/webhooks", lambda t: {"url": "https://example.com/" + t, "secret": "s" * 16, "events": []}, "url"),
        ("/rooms", lambda t: {"title": "T", t: 1}, None),  # a key: named by itself
    ],
)
def test_a_string_the_database_cannot_store_is_a_422_wherever_it_is(call, text, path, body, field):
    raw = json.dumps(body(text)).encode()  # json.dumps writes a lone surrogate as its escape, as a client does
    errors = fields(problem_of(call("POST", path, raw=raw), 422))
    assert (field or text) in errors, errors
    assert not Debate.objects.exists() and not Room.objects.exists() and not Webhook.objects.exists()


def test_a_body_nested_too_deep_is_a_422_and_one_too_deep_to_parse_a_400(call):
    assert fields(problem_of(call("POST", "/rooms", raw=b'{"title": ' + b"[" * 40 + b"]" * 40 + b"}"), 422))
    problem_of(call("POST", "/rooms", raw=b"[" * 100_000 + b"]" * 100_000), 400)


def test_a_number_json_does_not_have_is_a_400_and_one_past_a_float_a_422(call):
    problem_of(call("POST", "/rooms", raw=b'{"title": Infinity}'), 400)
    assert "title" in fields(problem_of(call("POST", "/rooms", raw=b'{"title": 1e999}'), 422))


def test_a_query_with_a_nul_is_a_422(call):
    assert "role" in fields(problem_of(call("GET", "/personas?role=a%00b"), 422))


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/debates", {"topic": "x" * 501}, "topic"),
        ("/debates", {"topic": "ok", "premise": "x" * 501}, "premise"),
        ("/rooms", {"title": "x" * 201}, "title"),
        ("/tournaments", {"name": "x" * (MAX_NAME_CHARS + 1)}, "name"),
        ("/experiments", {"name": "x" * (MAX_NAME_CHARS + 1)}, "name"),
        ("/tournaments", {"name": "T", "questions": ["x" * 501]}, "questions"),  # the command line's words
        ("/webhooks", {"url": "https://example.com/" + "x" * 500, "secret": "s" * 16, "events": []}, "url"),
        ("/debates", {"topic": "x" * 1_000_000}, "topic"),
    ],
)
def test_a_string_past_its_fields_bound_is_a_422(call, path, body, field):
    errors = fields(problem_of(call("POST", path, body), 422))
    assert field in errors, errors
    assert not Tournament.objects.exists()


def test_the_spec_file_holds_the_same_name_bound_as_the_api(people, tmp_path):
    Persona.objects.create(name="Ada", role="debater", yaml="name: Ada", personality="Ada")
    spec = tmp_path / "long.yaml"
    spec.write_text(f"name: {'x' * (MAX_NAME_CHARS + 1)}\ndebaters: [Ada, Ada]\njudges: [Ada]\nquestions: [Why]\n")
    from batches.spec import SpecErrors
    from tournaments.spec import read_spec

    with pytest.raises(SpecErrors) as refused:
        read_spec(spec)
    assert ("name", f"{spec}: name: at most {MAX_NAME_CHARS} characters, not {MAX_NAME_CHARS + 1}") in (
        refused.value.problems
    )
    spec.write_text(f"name: Short\ndebaters: [Ada, Ada]\njudges: [Ada]\nquestions: [{'x' * 501}]\n")
    with pytest.raises(SpecErrors) as refused:
        read_spec(spec)
    assert ("questions", f"{spec}: questions[1]: the topic is longer than 500 characters") in refused.value.problems


# -- typed bodies, every problem at once -----------------------------------------------------------------------
@pytest.mark.parametrize("body", [[], 5, "text", None])
def test_a_body_that_is_not_an_object_is_a_422(call, people, body):
    debate = Debate.objects.create(topic="Kept", owner=people["owner"])
    reply = call("PATCH", f"/debates/{debate.pk}", raw=json.dumps(body).encode())
    problem_of(reply, 422)
    for path in ("/rooms", "/tournaments", "/experiments", "/webhooks"):
        problem_of(call("POST", path, raw=json.dumps(body).encode()), 422)


def test_an_unknown_key_is_refused_not_ignored(call, people):
    debate = Debate.objects.create(topic="Kept", owner=people["owner"])
    errors = fields(problem_of(call("PATCH", f"/debates/{debate.pk}", {"visiblity": "public"}), 422))
    assert "visiblity" in errors


def test_a_tournament_spec_with_wrong_types_and_wrong_names_reports_every_problem_at_once(call):
    body = {
        "name": "Three problems",
        "debaters": ["Nobody", "Noone"],
        "judges": ["Judge Nobody"],
        "questions": [{"topic": 5}],
        "repeats": "twice",
    }
    listed = problem_of(call("POST", "/tournaments", body), 422)["errors"]
    assert {e["field"] for e in listed} == {"questions.0", "questions.0.topic", "repeats", "debaters", "judges"}
    messages = [e["message"] for e in listed]
    for name in ("Nobody", "Noone", "Judge Nobody"):
        assert any(f"no persona is named {name!r}" in m for m in messages), messages
    assert not Tournament.objects.exists()


def test_an_experiment_spec_is_typed(call):
    body = {"name": "E", "protocols": ["nonsense"], "judges": [5], "questions": [{"passage": "p"}]}
    errors = fields(problem_of(call("POST", "/experiments", body), 422))
    assert set(errors) == {"protocols", "judges", "questions"}, errors
    assert errors["judges"] == "spec: judges[1]: expected a persona name or a YAML file path"  # the CLI's words
    # The create's own check, told with the reading's: in its words, not the schema's.
    assert errors["protocols"] == (
        "There is no protocol 'nonsense'; the protocols are evidence_debate, consultancy, blind, oracle."
    )


# -- the schema and the command line ---------------------------------------------------------------------------
def test_export_openapi_schema_without_api_exports_ours(capsys):
    call_command("export_openapi_schema")
    schema = json.loads(capsys.readouterr().out)
    assert schema["info"]["title"] == "ChaosLM API"
    refusal = schema["paths"]["/api/v1/debates"]["post"]["responses"]["415"]
    assert refusal["content"] == {PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}}
