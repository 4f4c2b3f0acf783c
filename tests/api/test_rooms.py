"""Rooms over the API against a running server: created with the new-room form's rules, listed, read and
exported as the room's export shows each caller (whispers and system prompts for its owner only); the owner's
actions with the page's messages; the permission matrix of every endpoint; the event stream (resumed exactly,
whispers to the owner only); and the room.stopped webhook."""

from __future__ import annotations

import time

import pytest

from tests.api.conftest import api, logged_in, make_token, revoke_token
from tests.api.receiver import Receiver
from tests.api.test_debates import read_sse
from tests.api.test_webhooks import SECRET, verified, wait_until


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


def names_to_ids(client) -> dict[str, int]:
    return {p["name"]: p["id"] for p in client.get("/personas").json()}


def new_room(client, *names: str, **fields) -> dict:
    found = names_to_ids(client)
    made = client.post("/rooms", json={"title": "Cities", "personas": [found[n] for n in names], **fields})
    assert made.status_code == 201, made.text
    return made.json()


def wait_room(client, room_id: int, condition, timeout: float = 60) -> dict:
    """Poll GET /rooms/{id} until `condition(room)`; the room as then returned."""
    deadline = time.monotonic() + timeout
    while not condition(room := client.get(f"/rooms/{room_id}").json()):
        assert time.monotonic() < deadline, f"room {room_id}: {room}"
        time.sleep(0.1)
    return room


def test_say_whisper_keep_and_drop_as_the_page_does(server, room_tokens, llm):
    llm.configure(latency=0.0, reply_words=6)
    with api(server, room_tokens["owner"]) as client:
        room = new_room(client, "Marcus Vale", "Ada Sterling")
        marcus, ada = (a["id"] for a in room["agents"])
        said = client.post(f"/rooms/{room['id']}/say", json={"text": "Should cities ban cars?"})
        assert said.status_code == 201, said.text
        assert (said.json()["kind"], said.json()["author"]) == ("user", "olive")
        answered = wait_room(client, room["id"], lambda r: len(r["pending"]) == 2)
        assert {m["author"] for m in answered["pending"]} == {"Marcus Vale", "Ada Sterling"}
        refused = client.post(f"/rooms/{room['id']}/say", json={"text": "And buses?"})
        assert refused.status_code == 422 and refused.json()["detail"] == "Keep or drop the pending answers first."
        first, second = answered["pending"]
        kept = client.post(f"/rooms/{room['id']}/keep", json={"keep": [first["id"]]})
        assert kept.status_code == 200 and kept.json()["pending"] == []
        decided = {m["id"]: m["active"] for m in kept.json()["messages"] if m["kind"] == "agent"}
        assert decided == {first["id"]: True, second["id"]: False}  # the dropped one joins faded

        # A whisper to someone not in this room: the page's message, and nothing said.
        stranger = client.post(f"/rooms/{room['id']}/say", json={"text": "psst", "to": [ada, 10**9]})
        assert stranger.status_code == 422
        assert stranger.json()["detail"] == (
            "Whisper only to this room's agents: one you chose is not in it (has it left? reload the page)."
        )
        whisper = client.post(f"/rooms/{room['id']}/say", json={"text": "psst, Ada", "to": [ada]})
        assert whisper.status_code == 201 and whisper.json()["whisper_to"] == ["Ada Sterling"]
        # Only the agent it is addressed to answers it.
        answered = wait_room(client, room["id"], lambda r: len(r["pending"]) == 1)
        assert answered["pending"][0]["author"] == "Ada Sterling"
        assert client.post(f"/rooms/{room['id']}/keep", json={"keep": []}).status_code == 200
        assert marcus in {a["id"] for a in answered["agents"]}
    with api(server, room_tokens["staff"]) as staff:
        # Staff see the room, not the owner's whisper (the page's rule).
        seen = staff.get(f"/rooms/{room['id']}").json()
        assert "psst, Ada" not in [m["content"] for m in seen["messages"]]
    with logged_in(server, "olive") as page:
        assert "psst, Ada" in page.get(f"/rooms/{room['id']}/").text


def test_agents_turn_order_and_mode(server, room_tokens, llm):
    llm.configure(latency=0.0, reply_words=6)
    with api(server, room_tokens["owner"]) as client:
        room = new_room(client, "Marcus Vale", "Ada Sterling")
        found = names_to_ids(client)
        path = f"/rooms/{room['id']}"
        added = client.post(f"{path}/agents", json={"persona": found["Judge Ines Okafor"]})
        assert added.status_code == 201 and added.json()["name"] == "Judge Ines Okafor"
        again = client.post(f"{path}/agents", json={"persona": found["Judge Ines Okafor"]})
        assert again.status_code == 422 and again.json()["detail"] == "Judge Ines Okafor is already in this room."
        assert client.post(f"{path}/agents", json={"persona": 10**9}).status_code == 422
        judge = added.json()["id"]
        paused = client.patch(f"{path}/agents/{judge}", json={"participating": False})
        assert paused.status_code == 200 and paused.json()["participating"] is False
        assert [a["participating"] for a in client.get(path).json()["agents"]] == [True, True, False]
        assert client.delete(f"{path}/agents/{judge}").status_code == 204
        now = client.get(path).json()
        assert [a["name"] for a in now["agents"]] == ["Marcus Vale", "Ada Sterling"]
        assert now["messages"][-1]["content"] == "[Judge Ines Okafor | judge] left the conversation"
        assert client.delete(f"{path}/agents/{judge}").status_code == 404  # gone: not this room's agent

        marcus, ada = (a["id"] for a in now["agents"])
        not_pick = client.post(f"{path}/agents/{ada}/next")
        assert not_pick.status_code == 422
        assert not_pick.json()["detail"] == "Choose the turn order 'pick' to say who speaks next."
        bad = client.put(f"{path}/turn-order", json={"turn_order": "selector", "selector": 10**9})
        assert bad.status_code == 422 and [e["field"] for e in bad.json()["errors"]] == ["selector"]
        pick = client.put(f"{path}/turn-order", json={"turn_order": "pick"})
        assert pick.status_code == 200 and pick.json()["turn_order"] == "pick"
        assert pick.json()["up_next"] == [marcus, ada]
        assert client.post(f"{path}/agents/{ada}/earlier").json()["up_next"] == [ada, marcus]
        assert client.post(f"{path}/agents/{marcus}/next").json()["up_next"] == [marcus, ada]

        settings = client.put(f"{path}/settings", json={"response_delay": 0, "max_messages": 2, "max_wait": 60})
        assert settings.status_code == 422 and [e["field"] for e in settings.json()["errors"]] == ["response_delay"]
        assert client.put(f"{path}/settings", json={"response_delay": 1, "max_messages": 2}).status_code == 200
        assert client.post(f"{path}/interrupt").json()["detail"] == (
            "Auto mode is not running: the floor is yours already."
        )
        started = client.post(f"{path}/mode", json={"mode": "auto"})
        assert started.status_code == 200 and started.json()["mode"] == "auto"
        done = wait_room(client, room["id"], lambda r: r["mode"] == "manual")
        assert done["pause_reason"] == "the message limit (2) was reached"
        # Marcus was picked to speak next.
        assert next(m["author"] for m in done["messages"] if m["kind"] == "agent") == "Marcus Vale"
        assert client.post(f"{path}/mode", json={"mode": "auto"}).json()["mode"] == "auto"
        stopped = client.post(f"{path}/mode", json={"mode": "manual"})
        assert stopped.status_code == 200 and stopped.json()["mode"] == "manual"
        assert stopped.json()["messages"][-1]["content"] == "Auto mode stopped"


# Who gets what on the owner's private room, action by action: the page's `owner_action` rule (404 for who may
# not see it, 403 for who may see it but not change it), the token's own (401; a read-only token changes
# nothing). The owner goes last: its action may change the room.
ACTIONS = [
    ("POST", "/say", {"text": " "}, 422),
    ("POST", "/mode", {"mode": "manual"}, 200),
    ("POST", "/interrupt", None, 422),
    ("POST", "/keep", {"keep": []}, 200),
    ("POST", "/agents", {"persona": 10**9}, 422),
    ("PATCH", "/agents/{agent}", {"participating": True}, 200),
    ("PUT", "/settings", {"response_delay": 2}, 200),
    ("PUT", "/turn-order", {"turn_order": "round_robin"}, 200),
    ("POST", "/agents/{agent}/next", None, 422),
    ("POST", "/agents/{agent}/earlier", None, 422),
    ("DELETE", "/agents/{agent}", None, 204),
]
REFUSED = {"other": 404, "staff": 403, "read_only": 403, "revoked": 401, "anonymous": 401}


@pytest.mark.parametrize(("method", "path", "body", "owner"), ACTIONS, ids=[f"{m} {p}" for m, p, _, _ in ACTIONS])
def test_the_room_actions_permission_matrix(server, room_tokens, method, path, body, owner):
    with api(server, room_tokens["owner"]) as client:
        room = new_room(client, "Ada Sterling")
        private = path.format(agent=room["agents"][0]["id"])
        public = new_room(client, "Ada Sterling", visibility="public")
        public_path = path.format(agent=public["agents"][0]["id"])
    for who, status in {**REFUSED, "owner": owner}.items():
        with api(server, room_tokens[who]) as client:
            reply = client.request(method, f"/rooms/{room['id']}{private}", json=body)
        assert reply.status_code == status, f"{who}: {reply.status_code} {reply.text[:200]}"
        if status >= 400:
            assert reply.headers["content-type"] == "application/problem+json"
    with api(server, room_tokens["other"]) as other:
        # A public room: another user sees it but may not change it.
        assert other.request(method, f"/rooms/{public['id']}{public_path}", json=body).status_code == 403


def test_the_room_stream_permission_matrix(server, room_tokens):
    with api(server, room_tokens["owner"]) as client:
        room = new_room(client, "Ada Sterling")
    for who, status in READ.items():
        with api(server, room_tokens[who]) as client, client.stream("GET", f"/rooms/{room['id']}/events") as reply:
            assert reply.status_code == status, who
            if status == 200:
                assert reply.headers["content-type"].startswith("text/event-stream")


def paused():
    """A stop for read_sse: once both the pause's message and the status after it have come."""
    seen = set()

    def stop(kind: str, data: dict) -> bool:
        if kind == "message" and data["content"].startswith("Conversation paused"):
            seen.add("message")
        if kind == "status" and data["mode"] == "manual":
            seen.add("status")
        return seen == {"message", "status"}

    return stop


def test_the_room_stream_resumes_exactly_and_ends_with_the_rooms_messages(server, room_tokens, llm):
    llm.configure(latency=0.05, token_rate=100, reply_words=10)
    with api(server, room_tokens["owner"]) as client:
        room = new_room(client, "Marcus Vale", "Ada Sterling")
        path = f"/rooms/{room['id']}"
        client.put(f"{path}/settings", json={"response_delay": 1, "max_messages": 5})
        assert client.post(f"{path}/mode", json={"mode": "auto"}).status_code == 200
        first: list[tuple[str, int | None, dict]] = []
        with client.stream("GET", f"{path}/events", params={"tokens": 1}, timeout=60) as reply:
            assert reply.headers["content-type"].startswith("text/event-stream")
            for item in read_sse(reply):
                first.append(item)
                if sum(kind == "message" and data["kind"] == "agent" for kind, _, data in first) == 2:
                    break  # the client goes away mid-conversation
        last_id = [i for kind, i, _ in first if kind == "message"][-1]
        time.sleep(1.5)  # messages are saved while nobody listens
        headers = {"Last-Event-ID": str(last_id)}
        with client.stream("GET", f"{path}/events", headers=headers, timeout=120) as reply:
            second = list(read_sse(reply, stop=paused()))
        streamed = [data for kind, _, data in first + second if kind == "message"]
        ids = [i for kind, i, _ in first + second if kind == "message"]
        assert ids == [m["id"] for m in streamed] and len(ids) == len(set(ids))  # nothing twice
        # Nothing missed: exactly the room's messages, in order.
        assert streamed == client.get(f"{path}/export/json").json()["messages"]
        assert streamed[-1]["content"] == "Conversation paused: the message limit (5) was reached"
        assert ("status", None, {"mode": "auto", "pause_reason": ""}) in first
        assert ("status", None, {"mode": "manual", "pause_reason": "the message limit (5) was reached"}) in second
        assert {data["name"] for kind, _, data in first if kind == "token"} <= {"Marcus Vale", "Ada Sterling"}
        assert any(kind == "token" for kind, _, _ in first), "no token deltas with ?tokens=1"
        # `after` resumes the same way.
        with client.stream("GET", f"{path}/events", params={"after": last_id}, timeout=60) as reply:
            again = [data for kind, _, data in read_sse(reply, stop=paused()) if kind == "message"]
        assert again == [data for kind, _, data in second if kind == "message"]


def test_the_room_stream_shows_whispers_to_the_owner_only_and_pending_answers_to_all(server, room_tokens, llm):
    llm.configure(latency=0.0, reply_words=6)
    with api(server, room_tokens["owner"]) as owner:
        room = new_room(owner, "Marcus Vale", "Ada Sterling")
        ada = room["agents"][1]["id"]
        owner.post(f"/rooms/{room['id']}/say", json={"text": "psst, Ada", "to": [ada]})
        wait_room(owner, room["id"], lambda r: len(r["pending"]) == 1)
    messages_of = {}
    for who in ("owner", "staff"):
        with api(server, room_tokens[who]) as client:
            with client.stream("GET", f"/rooms/{room['id']}/events", timeout=30) as reply:
                seen = list(read_sse(reply, stop=lambda kind, data: kind == "pending"))
            messages = [data for kind, _, data in seen if kind == "message"]
            assert messages == client.get(f"/rooms/{room['id']}/export/json").json()["messages"]
            assert ("psst, Ada" in [m["content"] for m in messages]) == (who == "owner"), who
            assert seen[-1][2]["author"] == "Ada Sterling"  # the pending answer, which everyone's page shows
            messages_of[who] = messages
    with api(server, room_tokens["owner"]) as owner:
        pending = owner.get(f"/rooms/{room['id']}").json()["pending"][0]
        owner.post(f"/rooms/{room['id']}/keep", json={"keep": [pending["id"]]})
        # Kept, it comes as a message after the ones before it, with its id.
        after = messages_of["owner"][-1]["id"]
        with owner.stream("GET", f"/rooms/{room['id']}/events", params={"after": after}, timeout=30) as reply:
            kept = next(read_sse(reply, stop=lambda kind, data: kind == "message"))
    assert kept[:2] == ("message", pending["id"]) and kept[2]["active"] is True


def test_a_room_that_leaves_auto_mode_is_told_to_its_webhooks_signed(server, llm):
    llm.configure(latency=0.0, reply_words=6)
    receiver = Receiver()
    try:
        with api(server, make_token(server, "otto")) as client:
            hook = client.post("/webhooks", json={"url": receiver.url, "secret": SECRET, "events": ["room.stopped"]})
            assert hook.status_code == 201, hook.text
            room = new_room(client, "Ada Sterling")
            path = f"/rooms/{room['id']}"
            client.put(f"{path}/settings", json={"response_delay": 1, "max_messages": 2})
            client.post(f"{path}/mode", json={"mode": "auto"})
            wait_until(lambda: len(receiver.received) >= 1)
            by_itself = verified(receiver.received[0])
            assert receiver.received[0].headers["X-ChaosLM-Event"] == "room.stopped"
            assert by_itself["type"] == "room.stopped"
            assert by_itself["room"] == {
                "id": room["id"],
                "title": "Cities",
                "reason": "the message limit (2) was reached",
                "by_owner": False,
                "messages_since_auto": 2,
            }
            client.post(f"{path}/mode", json={"mode": "auto"})
            client.post(f"{path}/mode", json={"mode": "manual"})
            wait_until(lambda: len(receiver.received) >= 2)
            by_owner = verified(receiver.received[1])["room"]
            assert (by_owner["reason"], by_owner["by_owner"]) == ("the owner stopped it", True)
            time.sleep(1)
            assert len(receiver.received) == 2  # each stop told once
            deliveries = client.get(f"/webhooks/{hook.json()['id']}/deliveries").json()
            logged = [(d["kind"], d["status"], d["attempts"]) for d in deliveries]
            assert logged == [("room.stopped", "delivered", 1)] * 2
            client.delete(f"/webhooks/{hook.json()['id']}")
    finally:
        receiver.close()


def test_a_token_revoked_while_its_room_stream_is_open_closes_it(server, llm):
    secret = make_token(server, "olive", name="room stream short-lived")
    with api(server, secret) as client:
        room = new_room(client, "Ada Sterling")
        with client.stream("GET", f"/rooms/{room['id']}/events", timeout=30) as reply:
            items = read_sse(reply)
            assert next(items)[0] == "message"
            revoke_token(server, "olive", "room stream short-lived")
            rest = list(items)
    assert rest[-1] == ("closed", None, {"reason": "The token was revoked."})
