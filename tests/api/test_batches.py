"""Tournaments and experiments over the API against a running server: made from the command line's spec as
JSON (its messages, every problem at once), followed to the end on their event stream, resumed exactly with
Last-Event-ID, their report and exports; the permission matrix as the batch pages rule it; and the
"tournament finished" webhook, signed and retried."""

from __future__ import annotations

import csv
import io

import pytest

from tests.api.conftest import api, make_token, revoke_token
from tests.api.receiver import Receiver
from tests.api.test_debates import read_sse
from tests.api.test_webhooks import SECRET, loopback_only, verified, wait_until

__all__ = ["loopback_only"]  # the guard: no test here connects off this machine

DEBATERS = ["Ada Sterling", "Marcus Vale"]
JUDGE = "Judge Ines Okafor"


@pytest.fixture(scope="module")
def tokens(server) -> dict[str, str | None]:
    made = {
        "owner": make_token(server, "olive", name="batch owner rw"),
        "other": make_token(server, "otto", name="batch other rw"),
        "staff": make_token(server, "stella", name="batch staff rw"),
        "read_only": make_token(server, "olive", write=False, name="batch owner ro"),
        "revoked": make_token(server, "olive", name="batch owner revoked"),
        "anonymous": None,
    }
    revoke_token(server, "olive", "batch owner revoked")
    return made


def tournament_spec(**changes) -> dict:
    spec = {
        "name": "API cup",
        "debaters": DEBATERS,
        "judges": [JUDGE],
        "questions": ["Should cities ban cars?", {"topic": "Is tea better than coffee?", "premise": "Tea is better"}],
        "options": {"turns": 2},
        "sides": "both",
    }
    return {**spec, **changes}


def follow(client, path: str, headers: dict | None = None, stop=lambda kind, data: False) -> list[tuple]:
    with client.stream("GET", path, headers=headers or {}, timeout=120) as reply:
        assert reply.status_code == 200, reply.read()
        assert reply.headers["content-type"].startswith("text/event-stream")
        return list(read_sse(reply, stop))


def test_a_tournament_from_spec_to_leaderboard(server, tokens, llm):
    llm.configure(latency=0.0, reply_words=8)
    with api(server, tokens["owner"]) as client:
        made = client.post("/tournaments", json=tournament_spec())
        assert made.status_code == 201, made.text
        tournament = made.json()
        assert tournament["status"] == "running" and tournament["owner"] == "olive"
        assert tournament["url"].endswith(f"/tournaments/{tournament['id']}/")
        # Two questions, each side once per pairing: four duels, each judged inside.
        assert tournament["progress"]["total"] == 4
        events = follow(client, f"/tournaments/{tournament['id']}/events")
        kinds = [kind for kind, _, _ in events]
        assert kinds[-1] == "end" and events[-1][2] == {"status": "completed"}
        debates = [(event_id, data) for kind, event_id, data in events if kind == "debate"]
        assert [event_id for event_id, _ in debates] == [1, 2, 3, 4]
        assert {d["status"] for _, d in debates} == {"completed"}
        assert {d["winner"] for _, d in debates} <= set(DEBATERS)
        last_progress = [data for kind, _, data in events if kind == "progress"][-1]
        assert (last_progress["done"], last_progress["total"], last_progress["running"]) == (4, 4, 0)
        status = client.get(f"/tournaments/{tournament['id']}").json()
        assert status["status"] == "completed" and status["finished_at"]
        assert status["share_url"] and status["progress"]["eta_seconds"] is None
        # The report is the page's report.json export, figure for figure.
        report = client.get(f"/tournaments/{tournament['id']}/report").json()
        exported = client.get(f"/tournaments/{tournament['id']}/export/report.json")
        assert exported.headers["content-type"] == "application/json"
        assert report == exported.json()
        assert report["tournament"]["status"] == "completed" and report["progress"]["done"] == 4
        assert sorted(r["name"] for r in report["ratings"]) == sorted(DEBATERS)
        for rating in report["ratings"]:
            assert {"rating", "ci_low", "ci_high", "wins", "losses"} <= set(rating)
        ratings = list(csv.reader(io.StringIO(client.get(f"/tournaments/{tournament['id']}/export/ratings.csv").text)))
        assert ratings[0][:3] == ["rank", "name", "rating"] and len(ratings) == 3
        matches = client.get(f"/tournaments/{tournament['id']}/export/matches.csv")
        assert matches.headers["content-type"].startswith("text/csv") and len(matches.text.splitlines()) == 5
        missing = client.get(f"/tournaments/{tournament['id']}/export/secrets.txt")
        assert missing.status_code == 404 and missing.headers["content-type"] == "application/problem+json"
        listed = client.get("/tournaments").json()
        assert tournament["id"] in [t["id"] for t in listed["results"]]


def test_the_stream_resumes_exactly_with_last_event_id(server, tokens, llm):
    llm.configure(latency=0.05, reply_words=6)
    with api(server, tokens["owner"]) as client:
        tournament = client.post("/tournaments", json=tournament_spec(name="Resumed cup")).json()
        path = f"/tournaments/{tournament['id']}/events"
        # Hang up right after the first debate's end, then come back with its id.
        first = follow(client, path, stop=lambda kind, data: kind == "debate")
        seen = [(event_id, data["debate"]) for kind, event_id, data in first if kind == "debate"]
        assert [event_id for event_id, _ in seen] == [1]
        rest = follow(client, path, headers={"Last-Event-ID": "1"})
        assert rest[-1][0] == "end"
        seen += [(event_id, data["debate"]) for kind, event_id, data in rest if kind == "debate"]
        # Nothing missed, nothing twice: each of the four debates once, numbered in order.
        assert [event_id for event_id, _ in seen] == [1, 2, 3, 4]
        assert len({debate for _, debate in seen}) == 4
        # `?after=` is the same, and after the last there is nothing more to tell.
        again = follow(client, path + "?after=3")
        assert [event_id for kind, event_id, _ in again if kind == "debate"] == [4]
        assert [kind for kind, _, _ in follow(client, path + "?after=4")] == ["progress", "status", "end"]


def test_a_spec_with_problems_gets_every_one_with_the_command_lines_messages(server, tokens):
    with api(server, tokens["owner"]) as client:
        body = tournament_spec(
            name="Broken cup", debaters=["Nobody Here", "personas/samples/ada.yaml"], colour="red", repeats="two"
        )
        body.pop("questions")
        body["questions_file"] = "/etc/passwd"
        reply = client.post("/tournaments", json=body)
        assert reply.status_code == 422 and reply.headers["content-type"] == "application/problem+json"
        errors = reply.json()["errors"]
        assert errors[0] == {
            "field": "colour",
            "message": "spec: unknown key 'colour'; the keys are arena, concurrency, debaters, format, judges, "
            "moderator, name, options, questions, questions_file, repeats, sides, visibility",
        }
        # Unknown keys first; once the keys are known, every key's problem at once.
        body.pop("colour")
        errors = client.post("/tournaments", json=body).json()["errors"]
        fields = [e["field"] for e in errors]
        assert fields == ["debaters", "debaters", "questions", "repeats"]
        messages = [e["message"] for e in errors]
        assert messages[0].startswith("spec: debaters[1]: no persona is named 'Nobody Here' (known: ")
        assert (
            messages[1] == "spec: debaters[2]: persona files are read on the command line only; give a persona's name"
        )
        assert messages[2] == "spec: questions_file: files are read on the command line only; give questions"
        assert messages[3] == "spec: repeats: expected a whole number"
        # A spec that reads well but breaks a rule gets the service's message, as on the command line.
        reply = client.post("/tournaments", json=tournament_spec(name="Broken cup", repeats=11))
        assert reply.status_code == 422
        assert reply.json()["errors"] == [{"field": "repeats", "message": "Repeats must be between 1 and 10."}]
        not_a_mapping = client.post("/tournaments", content=b"[1, 2]", headers={"Content-Type": "application/json"})
        assert not_a_mapping.status_code == 422
        assert "Broken cup" not in [t["name"] for t in client.get("/tournaments").json()["results"]]


READ = {"owner": 200, "other": 404, "staff": 200, "read_only": 200, "revoked": 401, "anonymous": 401}
OWNER_ONLY = {"owner": "ok", "other": 404, "staff": 403, "read_only": 403, "revoked": 401, "anonymous": 401}


@pytest.fixture(scope="module")
def paused(server, tokens, _llm_server_process) -> int:
    """A private tournament, paused at once (nothing runs long: the model answers slowly meanwhile)."""
    with api(server, tokens["owner"]) as client:
        made = client.post("/tournaments", json=tournament_spec(name="Matrix cup", concurrency=1)).json()
        assert client.post(f"/tournaments/{made['id']}/pause").status_code == 200
        return made["id"]


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("get", "", READ),
        ("get", "/report", READ),
        ("get", "/export/matches.csv", READ),
        ("get", "/events?after=999", READ),
        ("post", "/resume", OWNER_ONLY),
        ("post", "/cancel", OWNER_ONLY),
    ],
)
def test_the_permission_matrix(server, tokens, paused, method, path, expected):
    for who, want in expected.items():
        if want == "ok":
            continue  # the owner's own change is the happy path's
        with api(server, tokens[who]) as client:
            if path.startswith("/events") and want == 200:
                with client.stream("GET", f"/tournaments/{paused}{path}") as reply:
                    assert reply.status_code == 200, who
                continue
            reply = getattr(client, method)(f"/tournaments/{paused}{path}")
        assert reply.status_code == want, (who, path, reply.text)
        if want != 200:
            assert reply.headers["content-type"] == "application/problem+json"


def test_lists_creation_actions_and_delete_by_who_asks(server, tokens, paused):
    with api(server, tokens["read_only"]) as client:
        assert client.post("/tournaments", json=tournament_spec()).status_code == 403
        assert client.get("/tournaments").json()["count"] >= 1  # reading is fine
    with api(server, tokens["other"]) as client:
        assert paused not in [t["id"] for t in client.get("/tournaments").json()["results"]]
        assert paused not in [t["id"] for t in client.get("/tournaments?scope=public").json()["results"]]
        assert client.delete(f"/tournaments/{paused}").status_code == 404
    with api(server, tokens["owner"]) as owner:
        # Pausing a paused one is a conflict; resuming and pausing again work; a public one is seen by others.
        assert owner.post(f"/tournaments/{paused}/pause").status_code == 409
        assert owner.get(f"/tournaments/{paused}").json()["status"] == "paused"
        with api(server, tokens["staff"]) as staff:
            # Staff see it (as on its page) but its owner's actions are the owner's; deleting is theirs too.
            assert staff.get(f"/tournaments/{paused}").json()["share_url"]
            assert staff.post(f"/tournaments/{paused}/resume").status_code == 403
        assert owner.post(f"/tournaments/{paused}/cancel").json()["status"] == "cancelled"
        assert owner.post(f"/tournaments/{paused}/resume").status_code == 409
        with api(server, tokens["read_only"]) as read_only:
            assert read_only.delete(f"/tournaments/{paused}").status_code == 403
        with api(server, tokens["staff"]) as staff:
            assert staff.delete(f"/tournaments/{paused}").status_code == 204
        assert owner.get(f"/tournaments/{paused}").status_code == 404


def test_a_public_tournament_is_seen_by_others_but_theirs_to_change_only(server, tokens, llm):
    llm.configure(latency=0.0, reply_words=5)
    with api(server, tokens["owner"]) as owner:
        made = owner.post("/tournaments", json=tournament_spec(name="Public cup", visibility="public")).json()
        assert made["visibility"] == "public"
    with api(server, tokens["other"]) as other:
        assert made["id"] in [t["id"] for t in other.get("/tournaments?scope=public").json()["results"]]
        seen = other.get(f"/tournaments/{made['id']}").json()
        assert seen["share_url"] is None  # the share link is the owner's to hand out
        assert other.post(f"/tournaments/{made['id']}/pause").status_code == 403
        assert other.delete(f"/tournaments/{made['id']}").status_code == 403
        assert follow(other, f"/tournaments/{made['id']}/events")[-1][0] == "end"


def test_an_experiment_from_spec_to_report(server, tokens, llm):
    llm.configure(latency=0.0, reply_words=6)
    question = {
        "passage": "The lighthouse keeper painted the tower red in 1950 and white again in 1962.",
        "question": "What colour was the tower in 1955?",
        "answers": ["Red", "White"],
        "correct": 0,
    }
    spec = {"name": "API experiment", "questions": [question], "protocols": ["blind"], "judges": [JUDGE]}
    receiver = Receiver(script=[200])
    with api(server, tokens["owner"]) as client:
        hook = {"url": receiver.url, "secret": SECRET, "events": ["experiment.finished"]}
        assert client.post("/webhooks", json=hook).status_code == 201
        bad = client.post("/experiments", json={**spec, "protocols": "blind", "questions": [{"passage": ""}]})
        assert bad.status_code == 422
        assert [e["field"] for e in bad.json()["errors"]] == ["protocols", "questions"]
        made = client.post("/experiments", json=spec)
        assert made.status_code == 201, made.text
        experiment = made.json()
        assert experiment["progress"]["total"] == 2  # the question in both answer orders
        events = follow(client, f"/experiments/{experiment['id']}/events")
        assert [event_id for kind, event_id, _ in events if kind == "debate"] == [1, 2]
        assert events[-1] == ("end", None, {"status": "completed"})
        report = client.get(f"/experiments/{experiment['id']}/report").json()
        assert report == client.get(f"/experiments/{experiment['id']}/export/report.json").json()
        blind = next(p for p in report["report"]["protocols"] if p["protocol"] == "blind")
        assert blind["runs"] == 2
        runs = client.get(f"/experiments/{experiment['id']}/export/runs.csv").text.splitlines()
        assert runs[0].startswith("run,question,protocol,judge") and len(runs) == 3
    # Its owner's webhook is told, signed.
    wait_until(lambda: receiver.received)
    receiver.close()
    told = [verified(r) for r in receiver.received]
    assert [(b["type"], b["experiment"]["id"], b["experiment"]["progress"]) for b in told] == [
        ("experiment.finished", experiment["id"], {"total": 2, "done": 2, "failed": 0})
    ]


def test_a_finished_tournament_is_told_to_its_owners_webhook_signed_after_two_failures(server, tokens, llm):
    llm.configure(latency=0.0, reply_words=5)
    receiver = Receiver(script=[500, 500, 200])
    try:
        with api(server, make_token(server, "otto", name="batch hooks")) as client:
            hook = client.post(
                "/webhooks", json={"url": receiver.url, "secret": SECRET, "events": ["tournament.finished"]}
            )
            assert hook.status_code == 201, hook.text
            made = client.post("/tournaments", json=tournament_spec(name="Hooked cup", questions=["Tea?"])).json()
            assert follow(client, f"/tournaments/{made['id']}/events")[-1][2] == {"status": "completed"}
            wait_until(lambda: len(receiver.received) >= 3)
            bodies = [verified(r) for r in receiver.received]
            assert len({b["id"] for b in bodies}) == 1  # one delivery, three attempts
            assert bodies[-1]["type"] == "tournament.finished"
            assert bodies[-1]["tournament"] == {
                "id": made["id"],
                "name": "Hooked cup",
                "status": "completed",
                "progress": {"total": 2, "done": 2, "failed": 0},
            }
            assert receiver.received[-1].headers["X-ChaosLM-Event"] == "tournament.finished"
            deliveries = client.get(f"/webhooks/{hook.json()['id']}/deliveries").json()
            assert [(d["kind"], d["status"], d["attempts"], d["last_error"]) for d in deliveries] == [
                ("tournament.finished", "delivered", 3, "HTTP 500")
            ]
    finally:
        receiver.close()


def test_a_structured_tournaments_stream_tells_its_debate_and_the_judges_replay(server, tokens, llm):
    # A structured debate has no judge inside: its end is found by its match, its judge's replay by the judgment.
    llm.configure(latency=0.0, reply_words=5)
    spec = tournament_spec(name="Structured cup", format="structured", options={"questions": 1}, sides="once")
    with api(server, tokens["owner"]) as client:
        made = client.post("/tournaments", json={**spec, "questions": ["Tea?"]})
        assert made.status_code == 201, made.text
        events = follow(client, f"/tournaments/{made.json()['id']}/events")
        ended = [(event_id, data["format"]) for kind, event_id, data in events if kind == "debate"]
        assert ended == [(1, "structured"), (2, "sides_judge")]
        assert events[-1] == ("end", None, {"status": "completed"})
