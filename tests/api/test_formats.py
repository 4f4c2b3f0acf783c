"""Formats and protocol cards over the API against a running server: the built-ins and the cards a caller may
use, a card written (POST) and changed (PUT) by its owner, every problem of a bad card at once (422, each with
its line and field), and the permission matrix: a stranger gets 404 for a private card and 403 for a public
one, a read-only token writes nothing, staff may change any card."""

from __future__ import annotations

import pytest

from tests.api.conftest import api, make_token
from tests.debates import card_samples


@pytest.fixture(scope="module")
def tokens(server) -> dict[str, str]:
    return {
        "owner": make_token(server, "olive", name="cards owner rw"),
        "other": make_token(server, "otto", name="cards other rw"),
        "staff": make_token(server, "stella", name="cards staff rw"),
        "read_only": make_token(server, "olive", write=False, name="cards owner ro"),
    }


def names(client) -> list[str]:
    reply = client.get("/formats")
    assert reply.status_code == 200, reply.text
    return [f["name"] for f in reply.json()]


def test_a_card_written_changed_and_deleted_by_its_owner(server, tokens):
    owner, other = api(server, tokens["owner"]), api(server, tokens["other"])
    text = card_samples.valid(name="api-card", title="API card")
    reply = owner.post("/formats", json={"yaml": text})
    assert reply.status_code == 201, reply.text
    made = reply.json()
    assert (made["name"], made["title"], made["card"], made["owner"], made["public"]) == (
        "api-card",
        "API card",
        True,
        "olive",
        False,
    )
    assert made["yaml"] == text and made["editable"] is True
    assert [s["key"] for s in made["seats"]] == ["pro", "con"]
    # Built-ins first, then the caller's cards; a stranger sees neither the private card nor its page.
    listed = names(owner)
    assert listed.index("duel") < listed.index("api-card")
    assert "api-card" not in names(other)
    assert other.get("/formats/api-card").status_code == 404
    assert other.put("/formats/api-card", json={"yaml": text}).status_code == 404
    assert other.delete("/formats/api-card").status_code == 404
    # The owner changes it; made public, the stranger may read it but not change it.
    changed = owner.put("/formats/api-card", json={"yaml": text.replace("API card", "API card II"), "public": True})
    assert changed.status_code == 200, changed.text
    assert changed.json()["title"] == "API card II" and changed.json()["public"] is True
    seen = other.get("/formats/api-card")
    assert seen.status_code == 200 and seen.json()["editable"] is False
    refused = other.put("/formats/api-card", json={"yaml": text})
    assert refused.status_code == 403 and refused.json()["detail"] == "Only the card's owner can change it."
    assert other.delete("/formats/api-card").status_code == 403
    assert owner.delete("/formats/api-card").status_code == 204
    assert owner.get("/formats/api-card").status_code == 404


def test_a_bad_card_is_refused_with_every_problem_and_its_line(server, tokens):
    owner = api(server, tokens["owner"])
    reply = owner.post("/formats", json={"yaml": card_samples.BROKEN.replace("town-hall", "broken-card")})
    assert reply.status_code == 422
    assert reply.headers["content-type"] == "application/problem+json"
    errors = reply.json()["errors"]
    assert [(e["line"], e["field"].rsplit(".", 1)[-1]) for e in errors] == card_samples.BROKEN_PROBLEMS
    assert all(e["message"] for e in errors)
    assert "broken-card" not in names(owner)
    taken = owner.post("/formats", json={"yaml": card_samples.valid(name="duel")})
    assert taken.status_code == 422
    assert taken.json()["errors"] == [
        {"line": 1, "field": "name", "message": "'duel' is a built-in format's name; choose another."}
    ]


def test_a_read_only_token_writes_no_card_and_built_ins_cannot_be_changed(server, tokens):
    owner, read_only = api(server, tokens["owner"]), api(server, tokens["read_only"])
    text = card_samples.valid(name="ro-card")
    refused = read_only.post("/formats", json={"yaml": text})
    assert refused.status_code == 403
    assert refused.json()["detail"] == "This token is read-only; make a read-write token to change things."
    assert owner.post("/formats", json={"yaml": text}).status_code == 201
    assert read_only.get("/formats/ro-card").status_code == 200
    assert read_only.put("/formats/ro-card", json={"yaml": text}).status_code == 403
    assert read_only.delete("/formats/ro-card").status_code == 403
    assert owner.put("/formats/duel", json={"yaml": text}).status_code == 403
    assert owner.get("/formats/duel").json()["card"] is False


def test_staff_may_change_any_card_and_a_card_starts_a_debate(server, tokens, llm):
    owner, staff = api(server, tokens["owner"]), api(server, tokens["staff"])
    text = card_samples.valid(name="staffed")
    assert owner.post("/formats", json={"yaml": text}).status_code == 201
    assert (
        staff.put("/formats/staffed", json={"yaml": text.replace("Town hall", "Town hall (edited)")}).json()["title"]
        == "Town hall (edited)"
    )
    found = {p["name"]: p["id"] for p in owner.get("/personas").json()}
    body = {
        "format": "staffed",
        "topic": "Tea or coffee?",
        "seats": {"pro": found["Ada Sterling"], "con": found["Marcus Vale"]},
    }
    reply = owner.post("/debates", json=body)
    assert reply.status_code == 201, reply.text
    assert reply.json()["format"] == "staffed"
