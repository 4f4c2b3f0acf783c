"""Debates over the API against a running server: the happy path of every endpoint, the permission matrix
(owner, another user, staff, anonymous, a read-only token, a revoked token) as the pages rule it, and the
event stream: resumed exactly with Last-Event-ID, private thinking as the page shows it, a revoked token
refused on an open stream."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from tests.api.conftest import api, logged_in, make_token, revoke_token, wait_for

DEBATERS = {"Ada Sterling", "Marcus Vale"}


@pytest.fixture(scope="module")
def tokens(server) -> dict[str, str | None]:
    made = {
        "owner": make_token(server, "olive", name="owner rw"),
        "other": make_token(server, "otto", name="other rw"),
        "staff": make_token(server, "stella", name="staff rw"),
        "read_only": make_token(server, "olive", write=False, name="owner ro"),
        "revoked": make_token(server, "olive", name="owner revoked"),
        "anonymous": None,
    }
    revoke_token(server, "olive", "owner revoked")
    return made


def personas(client: httpx.Client) -> dict[str, int]:
    return {p["name"]: p["id"] for p in client.get("/personas").json()}


def duel(client: httpx.Client, turns: int = 1, judge: bool = True, **fields) -> dict:
    found = personas(client)
    seats = {"a": found["Ada Sterling"], "b": found["Marcus Vale"]}
    if judge:
        seats["judge"] = found["Judge Ines Okafor"]
    body = {"topic": "Should cities ban cars?", "premise": "Cities should ban cars", "seats": seats}
    reply = client.post("/debates", json={**body, "options": {"turns": turns}, **fields})
    assert reply.status_code == 201, reply.text
    return reply.json()


def read_sse(reply: httpx.Response, stop=lambda kind, data: False):
    """(kind, id, data) for each SSE event until the stream ends or `stop` says so."""
    kind, event_id, data = "", None, ""
    for line in reply.iter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("id: "):
            event_id = int(line[4:])
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and kind:
            item = (kind, event_id, json.loads(data))
            yield item
            if stop(kind, item[2]):
                return
            kind, event_id, data = "", None, ""


def test_a_debate_from_start_to_verdict_and_its_exports(server, tokens, llm):
    llm.configure(latency=0.01, reply_words=12)
    with api(server, tokens["owner"]) as client:
        roles = {p["role"] for p in client.get("/personas", params={"role": "judge"}).json()}
        assert roles == {"judge"}
        duel_format = next(f for f in client.get("/formats").json() if f["name"] == "duel")
        assert [s["key"] for s in duel_format["seats"]] == ["a", "b", "judge"]
        created = duel(client, turns=1)
        assert created["status"] in {"pending", "running"} and created["share_url"]
        done = wait_for(client, created["id"], "completed")
        kinds = [e["kind"] for e in done["events"]]
        assert kinds[0] == "HEADER" and {"PLAN", "THINK", "TURN", "SCORE", "VERDICT", "INTERNAL"} <= set(kinds)
        assert done["verdict"]["winner"] in DEBATERS
        assert {s["name"] for s in done["seats"]} == DEBATERS | {"Judge Ines Okafor"}
        # The owner sees the exact prompts, as on the page.
        assert all(e["prompt"] for e in done["events"] if e["kind"] not in {"HEADER", "SYSTEM"})
        exported = client.get(f"/debates/{created['id']}/export/json")
        markdown = client.get(f"/debates/{created['id']}/export/md")
        assert client.get("/debates", params={"scope": "mine"}).json()["results"][0]["id"] == created["id"]
    with logged_in(server, "olive") as page:
        assert exported.json() == page.get(f"/debates/{created['id']}/export.json").json()
        assert markdown.text == page.get(f"/debates/{created['id']}/export.md").text
        assert markdown.headers["content-type"].startswith("text/markdown")


def test_sharing_visibility_thinking_and_a_new_link(server, tokens, llm):
    llm.configure(latency=0.0, reply_words=8)
    with api(server, tokens["owner"]) as owner, api(server, tokens["other"]) as other:
        debate = duel(owner, judge=False)
        wait_for(owner, debate["id"], "completed")
        assert other.get(f"/debates/{debate['id']}").status_code == 404
        changed = owner.patch(f"/debates/{debate['id']}", json={"visibility": "public", "show_thinking": False})
        assert changed.status_code == 200 and changed.json()["visibility"] == "public"
        assert debate["id"] in [d["id"] for d in other.get("/debates", params={"scope": "public"}).json()["results"]]
        seen = other.get(f"/debates/{debate['id']}").json()
        # The page's rule for another viewer: no private thinking while the owner hides it, never a prompt.
        assert not {e["kind"] for e in seen["events"]} & {"PLAN", "THINK", "INTERNAL"}
        assert all(e["prompt"] is None for e in seen["events"]) and seen["share_url"] is None
        old = owner.get(f"/debates/{debate['id']}").json()["share_url"]
        assert httpx.get(old).status_code == 200
        new = owner.post(f"/debates/{debate['id']}/share-link").json()["share_url"]
        assert new != old and httpx.get(old).status_code == 404 and httpx.get(new).status_code == 200
        assert owner.delete(f"/debates/{debate['id']}").status_code == 204
        assert owner.get(f"/debates/{debate['id']}").status_code == 404


def test_speak_in_the_human_seat_and_end(server, tokens, llm):
    llm.configure(latency=0.0, reply_words=8)
    with api(server, tokens["owner"]) as client:
        found = personas(client)
        reply = client.post(
            "/debates",
            json={
                "format": "standard",
                "topic": "Is tea better than coffee?",
                "seats": {"p1": found["Ada Sterling"], "p2": found["Marcus Vale"], "human": True},
                "options": {"max_turns": 6},
            },
        )
        assert reply.status_code == 201, reply.text
        debate_id = reply.json()["id"]
        wait_for(client, debate_id, "waiting")
        assert client.post(f"/debates/{debate_id}/speak", json={"text": "  "}).status_code == 422
        spoken = client.post(f"/debates/{debate_id}/speak", json={"text": "Tea, clearly."})
        assert (
            spoken.status_code == 201
            and spoken.json()["kind"] == "USER"
            and spoken.json()["content"] == "Tea, clearly."
        )
        assert client.post(f"/debates/{debate_id}/end").status_code == 202
        done = wait_for(client, debate_id, "completed", "waiting")
        assert "Tea, clearly." in [e["content"] for e in done["events"] if e["kind"] == "USER"]
        assert client.post(f"/debates/{debate_id}/retry").status_code == 409


def test_retry_a_failed_debate(server, tokens, llm):
    llm.configure(latency=0.0, reply_words=8, rules=[{"fault": "500"}])
    with api(server, tokens["owner"]) as client:
        debate = duel(client, judge=False)
        failed = wait_for(client, debate["id"], "error")
        assert failed["error"] and failed["events"][-1]["kind"] == "ERROR"
        llm.configure(rules=[])
        assert client.post(f"/debates/{debate['id']}/retry").status_code == 202
        done = wait_for(client, debate["id"], "completed")
        assert "ERROR" not in {e["kind"] for e in done["events"]}


# Who gets what, endpoint by endpoint, on the owner's private, finished debate: the pages' rules
# (sharing.visible_or_404, owner_action, can_delete) plus the token's own (401; a read-only token changes nothing).
READ = {"owner": 200, "other": 404, "staff": 200, "read_only": 200, "revoked": 401, "anonymous": 401}
OWNER_ONLY = {"owner": "ok", "other": 404, "staff": 403, "read_only": 403, "revoked": 401, "anonymous": 401}
MATRIX = [
    ("GET", "", None, READ),
    ("GET", "/export/md", None, READ),
    ("GET", "/export/json", None, READ),
    ("GET", "/events", None, READ),
    ("PATCH", "", {"visibility": "private"}, {**OWNER_ONLY, "owner": 200}),
    ("POST", "/end", None, {**OWNER_ONLY, "owner": 202}),
    ("POST", "/speak", {"text": "hello"}, {**OWNER_ONLY, "owner": 409}),
    ("POST", "/retry", None, {**OWNER_ONLY, "owner": 409}),
    ("POST", "/share-link", None, {**OWNER_ONLY, "owner": 200}),
]


@pytest.fixture(scope="module")
def finished(server, tokens, _llm_server_process) -> int:
    _llm_server_process.reset()
    with api(server, tokens["owner"]) as client:
        debate = duel(client, judge=False)
        wait_for(client, debate["id"], "completed")
    return debate["id"]


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"), MATRIX, ids=[f"{m} {p or '/'}" for m, p, _, _ in MATRIX]
)
def test_the_permission_matrix(server, tokens, finished, method, path, body, expected):
    for who, status in expected.items():
        with api(server, tokens[who]) as client:
            reply = client.request(method, f"/debates/{finished}{path}", json=body)
        assert reply.status_code == status, f"{who}: {reply.status_code} {reply.text[:200]}"
        if status >= 400:
            assert reply.headers["content-type"] == "application/problem+json"


def test_the_permission_matrix_for_lists_creation_and_delete(server, tokens, llm):
    for who in ("owner", "other", "staff", "read_only"):
        with api(server, tokens[who]) as client:
            assert client.get("/debates").status_code == 200 and client.get("/personas").status_code == 200
    for who in ("revoked", "anonymous"):
        with api(server, tokens[who]) as client:
            assert client.get("/debates").status_code == 401 and client.get("/personas").status_code == 401
            assert client.post("/debates", json={"topic": "x"}).status_code == 401
    with api(server, tokens["read_only"]) as client:
        assert client.post("/debates", json={"topic": "x"}).status_code == 403
    with api(server, tokens["owner"]) as owner:
        first, second = duel(owner, judge=False), duel(owner, judge=False)
        wait_for(owner, first["id"], "completed")
        wait_for(owner, second["id"], "completed")
        owner.patch(f"/debates/{second['id']}", json={"visibility": "public"})
    expected = {"other": 404, "read_only": 403, "revoked": 401, "anonymous": 401}
    for who, status in expected.items():
        with api(server, tokens[who]) as client:
            assert client.delete(f"/debates/{first['id']}").status_code == status, who
    with api(server, tokens["other"]) as other:
        # Public: another user sees it but may neither change nor delete it.
        assert other.get(f"/debates/{second['id']}").status_code == 200
        assert other.delete(f"/debates/{second['id']}").status_code == 403
        assert other.post(f"/debates/{second['id']}/end").status_code == 403
    with api(server, tokens["staff"]) as staff:
        assert staff.delete(f"/debates/{first['id']}").status_code == 204  # staff may delete, as on the page
    with api(server, tokens["owner"]) as owner:
        assert owner.delete(f"/debates/{second['id']}").status_code == 204


def test_the_stream_resumes_exactly_with_last_event_id_and_ends_with_the_pages_transcript(server, tokens, llm):
    llm.configure(latency=0.05, token_rate=100, reply_words=15)
    with api(server, tokens["owner"]) as client:
        debate = duel(client, turns=2)
        first: list[tuple[str, int | None, dict]] = []
        with client.stream("GET", f"/debates/{debate['id']}/events", params={"tokens": 1}, timeout=60) as reply:
            assert reply.headers["content-type"].startswith("text/event-stream")
            saved = 0
            for item in read_sse(reply):
                first.append(item)
                saved += item[0] == "event"
                if saved == 6:
                    break  # the client goes away mid-debate
        last_id = [i for k, i, _ in first if k == "event"][-1]
        time.sleep(0.5)  # events are saved while nobody listens
        second = []
        headers = {"Last-Event-ID": str(last_id)}
        with client.stream("GET", f"/debates/{debate['id']}/events", headers=headers, timeout=120) as reply:
            second = list(read_sse(reply))
        assert second[-1] == ("end", None, {"status": "completed"})
        streamed = [data for kind, _, data in first + second if kind == "event"]
        ids = [i for kind, i, _ in first + second if kind == "event"]
        assert ids == [e["ordinal"] for e in streamed]
        assert len(ids) == len(set(ids))  # nothing twice
        page = client.get(f"/debates/{debate['id']}/export/json").json()["events"]
        # Nothing missed: exactly the page's transcript (in saved order; sorted by ordinal on the page).
        assert sorted(streamed, key=lambda e: e["ordinal"]) == page
        assert any(kind == "token" for kind, _, _ in first), "no token deltas with ?tokens=1"
        # `after` resumes the same way.
        with client.stream("GET", f"/debates/{debate['id']}/events", params={"after": last_id}) as reply:
            again = [data for kind, _, data in read_sse(reply) if kind == "event"]
        assert again == [data for kind, _, data in second if kind == "event"]


def test_the_stream_keeps_private_thinking_from_other_viewers_as_the_page_does(server, tokens, llm):
    llm.configure(latency=0.03, token_rate=100, reply_words=10)
    with api(server, tokens["owner"]) as owner, api(server, tokens["other"]) as other:
        debate = duel(owner, turns=1, visibility="public", show_thinking=False)
        with other.stream("GET", f"/debates/{debate['id']}/events", params={"tokens": 1}, timeout=60) as reply:
            seen = list(read_sse(reply))
        events = [data for kind, _, data in seen if kind == "event"]
        assert not {e["kind"] for e in events} & {"PLAN", "THINK", "INTERNAL"}
        assert not any("prompt" in e for e in events)
        private = {
            e["ordinal"] for e in owner.get(f"/debates/{debate['id']}").json()["events"] if e["visibility"] == "private"
        }
        assert private and not {d["ordinal"] for kind, _, d in seen if kind == "token"} & private
        assert events == other.get(f"/debates/{debate['id']}/export/json").json()["events"]


def test_a_token_revoked_while_its_stream_is_open_is_refused_at_once(server, llm):
    llm.configure(latency=0.5, token_rate=5, reply_words=40)
    secret = make_token(server, "olive", name="short-lived")
    with api(server, secret) as client:
        debate = duel(client, turns=3)
        with client.stream("GET", f"/debates/{debate['id']}/events", timeout=30) as reply:
            items = read_sse(reply)
            # The stream is live once it has sent a saved event (a status may come first while the run starts).
            assert next(kind for kind, *_ in items if kind != "status") == "event"
            revoke_token(server, "olive", "short-lived")
            revoked_at = time.monotonic()
            rest = list(items)
        assert rest[-1] == ("closed", None, {"reason": "The token was revoked."})
        assert time.monotonic() - revoked_at < 5
    with api(server, make_token(server, "olive")) as client:
        client.post(f"/debates/{debate['id']}/end")


def test_the_token_deltas_add_up_to_each_saved_turn(server, tokens, llm):
    # A wait before each reply's first token: the stream is open before the first turn is written.
    llm.configure(latency=0.3, token_rate=60, reply_words=14)
    with api(server, tokens["owner"]) as client:
        debate = duel(client, turns=2, judge=False)
        with client.stream("GET", f"/debates/{debate['id']}/events", params={"tokens": 1}, timeout=120) as reply:
            items = list(read_sse(reply))
    written: dict[int, str] = {}
    for kind, _, data in items:
        if kind == "reset":
            written[data["ordinal"]] = ""
        elif kind == "token":
            written[data["ordinal"]] = written.get(data["ordinal"], "") + data["text"]
    saved = {data["ordinal"]: data for kind, _, data in items if kind == "event"}
    turns = [ordinal for ordinal, event in saved.items() if event["kind"] == "TURN"]
    assert len(turns) == 2  # one statement a turn
    assert {ordinal: written.get(ordinal) for ordinal in turns} == {o: saved[o]["content"] for o in turns}
    # A step already under way as the client came streams the rest of its text only.
    assert all(saved[ordinal]["content"].endswith(text) for ordinal, text in written.items())
