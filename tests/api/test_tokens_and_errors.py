"""Personal API tokens and the API's errors, over HTTP against a running server: a token made on the account
page is shown once and works at once; a revoked one is refused at once; every refusal is an RFC 9457 problem
(401, 404, 413, 422, 400), never a 500 or an HTML page."""

from __future__ import annotations

from http import HTTPStatus

import httpx
import pytest

from tests.api.conftest import api, csrf_of, logged_in, make_token, revoke_token

PROBLEM = "application/problem+json"


def assert_problem(reply: httpx.Response, status: int) -> dict:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"] == PROBLEM
    body = reply.json()
    assert body["status"] == status and body["title"] and body["detail"]
    return body


def test_a_token_is_shown_once_then_only_its_prefix_and_last_use(server):
    secret = make_token(server, "otto", write=False, name="notebook")
    assert secret.startswith("chaoslm_") and len(secret) > 40
    with logged_in(server, "otto") as client:
        page = client.get("/account/tokens/").text
        assert secret not in page  # a reload never shows it again
        row = next(r for r in page.split('<li class="card">') if "<strong>notebook</strong>" in r)
        assert f"<code>{secret[:12]}…</code>" in row and "read only" in row and "never" in row
        assert api(server, secret).get("/personas").status_code == 200
        row = next(
            r
            for r in client.get("/account/tokens/").text.split('<li class="card">')
            if "<strong>notebook</strong>" in r
        )
        assert "never" not in row  # its last use is shown


def test_a_token_needs_a_name_and_keeps_what_was_typed(server):
    with logged_in(server, "otto") as client:
        csrf = csrf_of(client.get("/account/tokens/").text)
        reply = client.post(
            "/account/tokens/", data={"name": "x" * 101, "access": "write", "csrfmiddlewaretoken": csrf}
        )
        assert reply.status_code == 400
        assert "at most 100 characters" in reply.text and 'value="' + "x" * 101 + '"' in reply.text
        assert 'value="write" checked' in reply.text
        reply = client.post("/account/tokens/", data={"name": "  ", "csrfmiddlewaretoken": csrf})
        assert reply.status_code == 400 and "Give the token a name" in reply.text
        # No CSRF token: refused, as every form on the site.
        assert client.post("/account/tokens/", data={"name": "sneaky"}).status_code == 403


def test_the_account_page_needs_a_login_and_another_persons_token_is_not_found(server):
    assert httpx.get(server + "/account/tokens/").status_code == 302
    make_token(server, "olive", name="olive-only")
    with logged_in(server, "olive") as client:
        page = client.get("/account/tokens/").text
    row = next(r for r in page.split('<li class="card">') if "<strong>olive-only</strong>" in r)
    action = row.split('action="')[1].split('"')[0]
    with logged_in(server, "otto") as client:
        csrf = csrf_of(client.get("/account/tokens/").text)
        assert client.post(action, data={"csrfmiddlewaretoken": csrf}).status_code == 404


def test_a_revoked_token_is_refused_at_once(server):
    secret = make_token(server, "otto", name="to-revoke")
    assert api(server, secret).get("/personas").status_code == 200
    revoke_token(server, "otto", "to-revoke")
    body = assert_problem(api(server, secret).get("/personas"), 401)
    assert "Bearer" in body["detail"]


@pytest.mark.parametrize(
    "header", [None, "Bearer", "Bearer nonsense", "Basic b2xpdmU6cHc=", "Bearer " + "x" * 5000, "bearer chaoslm_"]
)
def test_no_valid_token_is_a_401_problem(server, header):
    headers = {"Authorization": header} if header else {}
    reply = httpx.get(server + "/api/v1/debates", headers=headers)
    assert_problem(reply, 401)
    assert reply.headers["www-authenticate"].startswith("Bearer")


def test_the_docs_and_schema_need_no_token_and_use_our_own_files(server):
    # The first request writes the reference (seconds on a busy machine); the process keeps it.
    docs = httpx.get(server + "/api/v1/docs", timeout=60)
    assert docs.status_code == 200
    assert '<html lang="en">' in docs.text and '<a href="/api/v1/openapi.json">' in docs.text
    assert "cdn" not in docs.text.lower() and "swagger" not in docs.text.lower()
    assert httpx.get(server + "/api/v1/openapi.json", timeout=60).json()["info"]["title"] == "ChaosLM API"


def test_bad_input_gets_a_problem_never_a_500_or_html(server):
    with api(server, make_token(server, "otto")) as client:
        assert_problem(client.get("/no/such/thing"), 404)
        assert_problem(client.get("/debates/99999999999999999999999"), 404)
        assert_problem(client.get("/debates/0"), 404)
        assert_problem(client.post("/debates", content=b"{not json", headers={"Content-Type": "application/json"}), 400)
        body = assert_problem(client.post("/debates", json={"topic": 5, "seats": "no", "visibility": "everyone"}), 422)
        fields = {e["field"] for e in body["errors"]}
        assert {"topic", "seats", "visibility"} <= fields  # every field's error at once
        assert_problem(client.get("/debates", params={"scope": "all"}), 422)
        assert_problem(client.get("/debates", params={"page": "x"}), 422)


def test_every_invalid_debate_field_is_listed_at_once_with_the_forms_messages(server):
    with api(server, make_token(server, "otto")) as client:
        judge = next(p for p in client.get("/personas").json() if p["name"] == "Judge Ines Okafor")["id"]
        body = assert_problem(
            client.post(
                "/debates",
                json={
                    "topic": "   ",
                    "seats": {"a": 999999, "b": judge, "z": 1},
                    "options": {"turns": 99, "colour": 1},
                },
            ),
            422,
        )
        no_b = assert_problem(client.post("/debates", json={"topic": "Tea?", "seats": {"a": 999999}}), 422)
    errors = {e["field"]: e["message"] for e in body["errors"]}
    assert errors == {
        "topic": "The topic must have at least one non-whitespace character.",
        "seats.a": "There is no persona 999999: seat 'a' takes a persona's id.",
        # The rule a persona breaks is named: its role is not the seat's.
        "seats.b": f"Persona {judge} (Judge Ines Okafor) is a judge; seat 'b' takes a debater.",
        "options.turns": "Ensure this value is less than or equal to 40.",
        "seats.z": "The duel format has no seat 'z'.",
        "options.colour": "The duel format has no option 'colour'.",
    }
    no_b_message = {e["field"]: e["message"] for e in no_b["errors"]}["seats.b"]
    assert no_b_message == "Choose a persona, as Judged duel needs 2 debaters played by personas."


def test_a_body_over_the_limit_is_a_413_problem(server):
    with api(server, make_token(server, "otto")) as client:
        reply = client.post(
            "/debates", content=b"{" + b" " * (65 * 1024) + b"}", headers={"Content-Type": "application/json"}
        )
    body = assert_problem(reply, 413)
    assert "64 KB" in body["detail"]


def test_a_refusal_goes_out_with_its_reason_phrase(server):
    """Not "422 Unknown Status": the status line names what the refusal is, as Python's table does."""
    with api(server, make_token(server, "olive")) as client:
        refused = client.post("/webhooks", json={"url": "x"})
    assert (refused.status_code, refused.reason_phrase) == (422, HTTPStatus(422).phrase)
