"""Rooms over the API against a running server: created with the new-room form's rules, listed, read and
exported as the room's export shows each caller (whispers and system prompts for its owner only), and the
permission matrix."""

from __future__ import annotations

import pytest

from tests.api.conftest import api, logged_in, make_token, revoke_token


@pytest.fixture(scope="module")
def room_tokens(server) -> dict[str, str | None]:
    made = {
        "owner": make_token(server, "olive", name="rooms owner"),
        "other": make_token(server, "otto", name="rooms other"),
        "staff": make_token(server, "stella", name="rooms staff"),
        "read_only": make_token(server, "olive", write=False, name="rooms ro"),
        "revoked": make_token(server, "olive", name="rooms revoked"),
        "anonymous": None,
    }
    revoke_token(server, "olive", "rooms revoked")
    return made


def test_a_room_is_created_listed_read_and_exported(server, room_tokens):
    with api(server, room_tokens["owner"]) as client:
        names = {p["name"]: p["id"] for p in client.get("/personas").json()}
        refused = client.post("/rooms", json={"title": "", "personas": []})
        assert refused.status_code == 422
        assert {e["field"] for e in refused.json()["errors"]} == {"title", "personas"}
        made = client.post(
            "/rooms", json={"title": "Cities", "personas": [names["Marcus Vale"], names["Ada Sterling"]]}
        )
        assert made.status_code == 201, made.text
        room = made.json()
        # They answer in the order given.
        assert [a["name"] for a in room["agents"]] == ["Marcus Vale", "Ada Sterling"]
        assert all(a["system_prompt"] for a in room["agents"])  # the owner's view
        assert room["id"] in [r["id"] for r in client.get("/rooms").json()]
        exported = client.get(f"/rooms/{room['id']}/export/json").json()
        markdown = client.get(f"/rooms/{room['id']}/export/md").text
    with logged_in(server, "olive") as page:
        assert exported == page.get(f"/rooms/{room['id']}/export.json").json()
        assert markdown == page.get(f"/rooms/{room['id']}/export.md").text


READ = {"owner": 200, "other": 404, "staff": 200, "read_only": 200, "revoked": 401, "anonymous": 401}


@pytest.mark.parametrize("path", ["", "/export/md", "/export/json"])
def test_the_rooms_permission_matrix(server, room_tokens, path):
    with api(server, room_tokens["owner"]) as client:
        ada = next(p["id"] for p in client.get("/personas").json() if p["name"] == "Ada Sterling")
        room = client.post("/rooms", json={"title": "Private", "personas": [ada]}).json()
    for who, status in READ.items():
        with api(server, room_tokens[who]) as client:
            assert client.get(f"/rooms/{room['id']}{path}").status_code == status, who
    with api(server, room_tokens["staff"]) as staff:
        # Staff see the room, but what only its owner reads stays the owner's.
        if path == "":
            assert all(a["system_prompt"] is None for a in staff.get(f"/rooms/{room['id']}").json()["agents"])
    for who, status in {"read_only": 403, "revoked": 401, "anonymous": 401}.items():
        with api(server, room_tokens[who]) as client:
            assert client.post("/rooms", json={"title": "x", "personas": [ada]}).status_code == status, who
