"""The page actions that came to the API last (api/polls.py, api/room_actions.py, api/batch_actions.py,
api/arenas.py, api/account.py), each against its page: the same refusals and messages, the same effect seen from
the page, the same rule of who may (404 for who may not see, 403 for who may see but not change, a read-only token
changes nothing). In the server's process (Django's test client with a bearer token): the fixtures are rows."""

from __future__ import annotations

import html
import json
import re
import time
from datetime import datetime

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from api import tokens
from api.models import ApiToken
from audience.models import PollVote
from chaoslm.llm import local_model
from chaoslm.runner import inline
from debates import estimates
from debates.models import Debate
from personas.models import Persona, import_personas
from rooms import services as room_services
from rooms import work as room_work
from rooms.models import Room, RoomAgent, RoomMessage, RoomTemplate
from tests.audience.test_votes import finish, first_statement, poll_duel
from tests.batches.test_arena import KINDS
from tests.debates.test_hold import held_duel
from tests.debates.test_hold import personas as personas

pytestmark = pytest.mark.django_db(transaction=True)


class Api:
    """A script's client: `Authorization: Bearer` with a token of `user`'s."""

    def __init__(self, user, *, write: bool = True) -> None:
        self.client = Client()
        self.header = {"HTTP_AUTHORIZATION": f"Bearer {tokens.create_token(user, 'test', read_only=not write)[1]}"}

    def __getattr__(self, method: str):
        def call(path: str, body=None, **extra):
            # No body is an empty one (Django's test client would send None as the bytes "None").
            data = json.dumps(body) if body is not None else (None if method == "get" else "")
            kwargs = {"content_type": "application/json"} if data is not None else {}
            return getattr(self.client, method)("/api/v1" + path, data, **kwargs, **self.header, **extra)

        return call


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def page_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def text(response) -> str:
    return html.unescape(response.content.decode())


# -- the audience poll and the hold ----------------------------------------------------------------------------------


def test_the_poll_over_the_api_is_the_page_box_its_votes_and_its_close(people):
    debate = poll_duel(people["owner"], visibility="public")
    owner, other = Api(people["owner"]), Api(people["other"])
    path = f"/debates/{debate.pk}/poll"
    box = other.get(path).json()
    assert box["open_phase"] == "before" and box["my_choice"] is None
    assert [o["key"] for o in box["options"]] == ["a", "b", "undecided"]
    assert all(o["before"] is None for o in box["options"])  # no tally before voting: no herding
    voted = other.post(path + "/vote", {"phase": "before", "choice": "a"})
    assert voted.status_code == 200 and voted.json()["my_choice"] == "a"
    assert [o["before"] for o in voted.json()["options"]] == [1, 0, 0]
    # The account's vote: the page, signed in as the same person, shows it as theirs.
    assert (
        "You voted: <strong>Ada (for)</strong>"
        in page_client(people["other"]).get(reverse("debate_poll", args=[debate.pk])).content.decode()
    )
    # The page's refusals, with its messages; nothing counted.
    refused = other.post(path + "/vote", {"phase": "after", "choice": "a"})
    assert refused.status_code == 409
    assert refused.json()["detail"] == "The after-debate vote has not opened yet; your vote was not counted."
    assert other.post(path + "/vote", {"phase": "before", "choice": "c"}).status_code == 400
    assert Api(people["other"], write=False).post(path + "/vote", {"phase": "before", "choice": "b"}).status_code == 403
    assert list(PollVote.objects.values_list("choice", flat=True)) == ["a"]
    # Closing: the owner's alone, while the vote after is open.
    first_statement(debate)
    finish(debate)
    assert owner.get(path).json()["can_close"] and not other.get(path).json()["can_close"]
    assert other.post(path + "/close").status_code == 403
    closed = owner.post(path + "/close")
    assert closed.status_code == 200 and closed.json()["final"] and closed.json()["state"] == "closed"
    again = owner.post(path + "/close")
    assert again.status_code == 409 and again.json()["detail"] == "The after-debate vote is not open."
    private = poll_duel(people["owner"], visibility="private")
    assert other.get(f"/debates/{private.pk}/poll").status_code == 404
    assert owner.get(f"/debates/{private.pk}/poll").json()["detail"] == "This debate has no audience vote."


def test_the_poll_vote_over_the_api_counts_against_the_addresss_limit(people, settings):
    debate = poll_duel(people["owner"], visibility="public")
    settings.CHAOSLM_POLL_VOTES_PER_MINUTE = 1
    path = f"/debates/{debate.pk}/poll/vote"
    assert Api(people["owner"]).post(path, {"phase": "before", "choice": "x"}).status_code == 400  # counted, though
    refused = Api(people["other"]).post(path, {"phase": "before", "choice": "a"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert refused.json()["detail"].startswith("Too many votes from your address")
    assert not PollVote.objects.exists()


def test_a_held_debate_starts_now_by_the_api_as_by_its_button(personas, people, llm_server, runner_idle):
    debate = held_duel(personas, people["owner"], visibility="public")
    path = f"/debates/{debate.pk}/start-now"
    assert Api(people["other"]).post(path).status_code == 403
    assert Api(people["owner"], write=False).post(path).status_code == 403
    assert Debate.objects.get(pk=debate.pk).held()
    asked = timezone.now()
    started = Api(people["owner"]).post(path)
    # Its start is now (the runner takes it up in its own time: its status may still read pending on a busy machine).
    assert started.status_code == 202
    assert asked <= datetime.fromisoformat(started.json()["starts_at"]) <= timezone.now()
    assert not Debate.objects.get(pk=debate.pk).held()
    again = Api(people["owner"]).post(path)
    assert again.status_code == 409 and again.json()["detail"] == "The debate was not held: it has started already."


def test_a_personas_prompt_preview(people):
    import_personas([("a.yaml", "name: Ann\nrole: debater\npersonality: Ann argues gently.\n")])
    ann = Persona.objects.get(name="Ann")
    preview = Api(people["other"]).get(f"/personas/{ann.pk}/prompt?role=judge").json()
    assert preview["role"] == "judge" and preview["prompt"] == ann.spec().system_prompt("judge")
    assert "Ann argues gently." in Api(people["other"]).get(f"/personas/{ann.pk}/prompt").json()["prompt"]


# -- rooms -----------------------------------------------------------------------------------------------------------


def chat_room(owner, visibility="public") -> Room:
    files = [(f"{n}.yaml", f"name: {n}\nrole: chat\npersonality: You are {n}.\n") for n in ("Alice", "Bob")]
    import_personas(files, missing_only=True)
    return room_services.create_room(owner, "Chat", visibility, list(Persona.objects.filter(name__in=["Alice", "Bob"])))


def test_a_rooms_panels_over_the_api(people):
    room = chat_room(people["owner"])
    owner, other = Api(people["owner"]), Api(people["other"])
    alice, bob = RoomAgent.objects.filter(room=room).order_by("name")
    base = f"/rooms/{room.pk}"
    body = {
        "agents": [{"id": alice.pk, "talkativeness": 30, "sees_earlier": True}, {"id": bob.pk, "talkativeness": 80}]
    }
    saved = owner.put(base + "/agent-settings", body)
    assert saved.status_code == 200
    assert {a["name"]: (a["talkativeness"], a["sees_earlier"]) for a in saved.json()} == {
        "Alice": (30, True),
        "Bob": (80, False),
    }
    refused = owner.put(base + "/agent-settings", {"agents": [{"id": alice.pk, "talkativeness": 101}]})
    assert refused.status_code == 422 and "Alice's talkativeness" in refused.json()["detail"]
    assert RoomAgent.objects.get(pk=alice.pk).talkativeness == 30  # nothing changed
    assert other.put(base + "/agent-settings", body).status_code == 403

    assert owner.put(base + "/memory", {"memory": "stop"}).json() == {"memory": "stop", "summarizer": None}
    wrong = owner.put(base + "/memory", {"memory": "forget"})
    assert wrong.status_code == 422 and wrong.json()["errors"][0]["field"] == "memory"

    template = owner.post(base + "/template", {"name": "  Pair  "})
    assert template.status_code == 201 and template.json()["name"] == "Pair" and template.json()["agents"] == 2
    assert owner.post(base + "/template", {"name": " "}).json()["detail"] == "Give the template a name."
    assert [t["name"] for t in owner.get("/room-templates").json()] == ["Pair"]
    assert other.get("/room-templates").json() == []
    made = owner.post("/rooms", {"title": "Again", "template": RoomTemplate.objects.get().pk})
    assert [a["name"] for a in made.json()["agents"]] == [a["name"] for a in owner.get(base).json()["agents"]]


def test_a_rooms_message_toggle_visibility_share_link_and_retry(people, llm_server, runner_idle):
    room = chat_room(people["owner"])
    owner, other = Api(people["owner"]), Api(people["other"])
    base = f"/rooms/{room.pk}"
    said = room_services.post_message(room, "olive", "Hello.")
    toggled = owner.post(f"{base}/messages/{said.pk}/toggle")
    assert toggled.status_code == 200 and toggled.json()["active"] is False
    assert not RoomMessage.objects.get(pk=said.pk).active
    assert other.post(f"{base}/messages/{said.pk}/toggle").status_code == 403
    elsewhere = chat_room(people["owner"])  # the owner's too, but the message is not in it
    assert owner.post(f"/rooms/{elsewhere.pk}/messages/{said.pk}/toggle").status_code == 404

    old_link = owner.get(base).json()["share_url"]
    assert old_link and other.get(base).json()["share_url"] is None  # the owner's to hand out
    new_link = owner.post(base + "/share-link").json()["share_url"]
    assert new_link != old_link and Client().get(old_link.split("testserver")[1]).status_code == 404
    assert owner.patch(base, {"visibility": "private"}).json()["visibility"] == "private"
    assert other.get(base).status_code == 404  # as on the page
    assert owner.patch(base, {"visibility": "secret"}).status_code == 422

    agent = RoomAgent.objects.filter(room=room).first()
    asked = owner.post(f"{base}/agents/{agent.pk}/retry")
    assert asked.status_code == 202
    inline.wait_idle()
    assert RoomMessage.objects.filter(room=room, kind__in=["agent", "pending"]).count() == 2  # the round ran


def test_a_room_is_deleted_by_its_page_and_by_the_api_its_auto_mode_stopped_first(people, llm_server, runner_idle):
    llm_server.configure(latency=0.2, token_rate=50, reply_words=20)
    room = chat_room(people["owner"])
    room.response_delay, room.max_messages = 0, 0
    room.save()
    room_services.post_message(room, "olive", "Talk among yourselves.")
    room_services.set_mode(room, Room.Mode.AUTO)
    room_work.start_auto(room.pk)
    deadline = time.monotonic() + 20
    while RoomMessage.objects.filter(room=room, kind="agent").count() < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    page = page_client(people["owner"]).get(reverse("room_detail", args=[room.pk])).content.decode()
    delete = reverse("room_delete", args=[room.pk])
    assert f'action="{delete}" data-confirm=' in page and "csrfmiddlewaretoken" in page
    assert 'data-confirm="Delete this room' not in Client().get(reverse("room_detail", args=[room.pk])).content.decode()
    assert page_client(people["other"]).post(delete).status_code == 403  # public: may see, may not delete
    assert Client(enforce_csrf_checks=True).post(delete).status_code == 403
    gone = page_client(people["owner"]).post(delete, follow=True)
    assert "Room deleted, with its messages." in text(gone)
    calls = len(llm_server.requests)
    time.sleep(1.5)
    assert len(llm_server.requests) <= calls + 1  # at most a call already on its way: the loop stopped
    assert not Room.objects.filter(pk=room.pk).exists() and not RoomMessage.objects.filter(room_id=room.pk).exists()

    kept = chat_room(people["owner"])
    assert Api(people["other"]).delete(f"/rooms/{kept.pk}").json()["detail"] == "Only the room's owner can delete it."
    assert Api(people["owner"], write=False).delete(f"/rooms/{kept.pk}").status_code == 403
    assert Api(people["staff"]).delete(f"/rooms/{kept.pk}").status_code == 204
    assert not Room.objects.filter(pk=kept.pk).exists()
    assert Api(people["owner"]).delete(f"/rooms/{kept.pk}").status_code == 404


# -- tournaments and experiments, and their arenas -------------------------------------------------------------------


def test_the_estimate_is_the_forms_line(people):
    import_personas(
        [
            ("a.yaml", "name: Ann\nrole: debater\npersonality: Ann argues.\n"),
            ("b.yaml", "name: Ben\nrole: debater\npersonality: Ben argues.\n"),
            ("j.yaml", "name: Jo\nrole: judge\npersonality: Jo judges.\njudging_criteria: Logic.\n"),
        ]
    )
    ids = {p.name: p.pk for p in Persona.objects.all()}
    form = {"name": "T", "debaters": [ids["Ann"], ids["Ben"]], "judges": [ids["Jo"]], "questions": "Tea?\nCars?"}
    form |= {"sides": "both", "repeats": 1, "option_turns": 2, "concurrency": 2, "visibility": "private"}
    line = text(page_client(people["owner"]).post(reverse("tournament_estimate"), form))
    spec = {"name": "T", "debaters": ["Ann", "Ben"], "judges": ["Jo"], "questions": ["Tea?", "Cars?"]}
    sized = Api(people["owner"]).post("/tournaments/estimate", spec | {"options": {"turns": 2}, "concurrency": 2})
    assert sized.status_code == 200, sized.content
    assert sized.json()["sentence"] in line and sized.json()["debates"] == 4
    # Its time as the form gives it: 4 debates of 14 calls, 2 at once (within the embedded model's slots, which
    # serves here), at the guess for it before any call is timed (8 s a call).
    said, at_once = sized.json()["time"], min(2, local_model.chosen().slots)
    assert sized.json()["calls"] == 56
    assert said == {
        "low_seconds": 56 * 8.0 / at_once,
        "high_seconds": 56 * 8.0 / at_once,
        "text": estimates.minutes_between(56 * 8.0 / at_once, 56 * 8.0 / at_once),
        "seconds_per_call": 8.0,
        "measured": False,
        "calls_at_once": at_once,
        "basis": f"{at_once} call{'s' if at_once > 1 else ''} at once, at a guess of 8.0 s a call for the embedded "
        "model: no call timed yet",
    }
    assert f"It will take {said['text']} ({said['basis']})." in " ".join(re.sub(r"<[^>]+>", "", line).split())
    # Its cost range as the form gives it (the default endpoint's model is free here).
    cost = sized.json()["cost"]
    assert cost["sentence"] == "It will cost about $0 (at 150 to 6,000 tokens read and 5 to 1,000 written a call)."
    assert cost["sentence"] in " ".join(re.sub(r"<[^>]+>", "", line).split())
    assert cost["unknown_price"] is False
    wrong = Api(people["owner"]).post("/tournaments/estimate", {"name": "T", "debaters": ["Nobody"], "judges": []})
    assert wrong.status_code == 422 and len(wrong.json()["errors"]) >= 2  # every problem at once
    experiment = Api(people["owner"]).post(
        "/experiments/estimate", {"name": "E", "protocols": ["blind"], "judges": ["Jo"], "sample": True}
    )
    assert experiment.status_code == 200 and experiment.json()["sentence"].endswith("LLM calls.")
    runs, calls = experiment.json()["debates"], experiment.json()["calls"]
    at_once = min(8, runs, local_model.chosen().slots)  # the spec's default concurrency, within the slots
    assert experiment.json()["time"]["calls_at_once"] == at_once
    assert experiment.json()["time"]["high_seconds"] == round(calls * 8.0 / at_once, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_a_batchs_sharing_and_arena_over_the_api(kind, people, llm_server, runner_idle):
    batch = kind.finished(people["owner"], llm_server, arena_on=False, visibility="public")
    plural = f"{batch._meta.model_name}s"
    owner, other, staff = Api(people["owner"]), Api(people["other"]), Api(people["staff"])
    base = f"/{plural}/{batch.pk}"
    sent = owner.put(base + "/arena", {"arena": True}).json()
    assert sent["arena"] and sent["blind"] is False and sent["message"] == kind.arena.opted_in
    assert "in the arena they are not blind" in sent["warning"]
    assert other.put(base + "/arena", {"arena": False}).status_code == 403
    assert staff.put(base + "/arena", {"arena": False}).status_code == 403  # the page's rule: the owner only
    link = staff.post(base + "/share-link").json()["share_url"]  # sharing: staff too, as on the page
    assert link.endswith(f"/{type(batch).objects.get(pk=batch.pk).share_token}/")
    assert owner.patch(base, {"visibility": "private"}).json()["visibility"] == "private"
    assert Debate.objects.filter(pk=kind.arena.items().first().debate_id, visibility="private").exists()
    assert other.get(base).status_code == 404
    now = owner.put(base + "/arena", {"arena": True}).json()
    assert now["blind"] and now["warning"] is None


@pytest.mark.parametrize("kind", KINDS)
def test_the_arenas_over_the_api_serve_blind_and_the_vote_is_final(kind, people, llm_server, runner_idle):
    kind.finished(people["owner"], llm_server)
    at = "matches" if kind.urls[0] == "arena" else "evidence"
    key = "match" if at == "matches" else "debate"
    voter = Api(people["other"])
    served = voter.get(f"/arena/{at}/next").json()[key]
    assert served["reveal"] is None and "Alice" not in json.dumps(served) and "Fenwick" not in json.dumps(served)
    first, second = kind.choices[:2]
    path = f"/arena/{at}/{served['id']}"
    assert voter.post(path + "/vote", {"choice": "C"}).json()["detail"] == kind.arena.bad_choice
    cast = voter.post(path + "/vote", {"choice": first})
    assert cast.status_code == 200 and cast.json()["reveal"]["names"]
    refused = voter.post(path + "/vote", {"choice": second})
    assert refused.status_code == 409 and refused.json()["detail"] == kind.arena.final
    assert voter.post(path + "/vote", {"choice": first}).status_code == 200  # the same vote again
    assert list(kind.arena.vote_model.objects.values_list("voter", "choice")) == [(f"user:{people['other'].pk}", first)]
    # The same account on the page: the same voter, shown the reveal, offered no vote.
    page = text(page_client(people["other"]).get(reverse(kind.urls[1], args=[served["id"]])))
    assert "is final." in page and 'id="arena-vote"' not in page
    assert Api(people["staff"]).get(path).json()["reveal"] is None  # blind to whoever has not voted
    assert voter.get("/arena/matches/999999").status_code == 404


def test_tokens_are_listed_and_revoked_over_the_api(people):
    owner = Api(people["owner"])
    spare, _secret = tokens.create_token(people["owner"], "spare", read_only=True)
    listed = owner.get("/tokens").json()
    assert {t["name"] for t in listed} == {"test", "spare"} and all("digest" not in t for t in listed)
    assert Api(people["other"]).delete(f"/tokens/{spare.pk}").status_code == 404  # another's: as none at all
    assert owner.delete(f"/tokens/{spare.pk}").status_code == 204
    assert ApiToken.objects.get(pk=spare.pk).revoked_at is not None


# -- share links -----------------------------------------------------------------------------------------------------


def test_a_share_link_opens_over_the_api_what_its_page_shows(people, llm_server, runner_idle):
    debate = poll_duel(people["owner"], visibility="unlisted")
    other = Api(people["other"])
    token = debate.share_token
    assert other.get(f"/debates/{debate.pk}").status_code == 404  # not theirs at its own address
    shown = other.get(f"/shared/debates/{token}")
    assert shown.status_code == 200 and shown.json()["id"] == debate.pk and shown.json()["share_url"] is None
    page = page_client(people["other"]).get(reverse("debate_share_export", args=[token, "md"])).content
    assert other.get(f"/shared/debates/{token}/export/md").content == page
    voted = other.post(f"/shared/debates/{token}/poll/vote", {"phase": "before", "choice": "b"})
    assert voted.status_code == 200 and voted.json()["my_choice"] == "b"
    assert other.get(f"/shared/debates/{token}/poll").json()["my_choice"] == "b"
    assert other.get("/shared/debates/not-the-token").status_code == 404
    Debate.objects.filter(pk=debate.pk).update(visibility="private")
    assert other.get(f"/shared/debates/{token}").status_code == 404  # a private thing's link opens nothing

    room = chat_room(people["owner"], visibility="unlisted")
    assert other.get(f"/shared/rooms/{room.share_token}").json()["id"] == room.pk
    page = page_client(people["other"]).get(reverse("room_share_export_json", args=[room.share_token])).json()
    assert other.get(f"/shared/rooms/{room.share_token}/export/json").json() == page

    batch = KINDS[1].values[0].finished(people["owner"], llm_server, visibility="unlisted")
    assert other.get(f"/tournaments/{batch.pk}").status_code == 404
    assert other.get(f"/shared/tournaments/{batch.share_token}").json()["id"] == batch.pk
    page = page_client(people["other"]).get(reverse("tournament_share_export", args=[batch.share_token, "report.json"]))
    assert other.get(f"/shared/tournaments/{batch.share_token}/export/report.json").json() == page.json()
    assert other.get(f"/shared/tournaments/{batch.share_token}/export/nothing.csv").status_code == 404


def test_a_cards_plan_over_the_api_is_its_pages(people):
    from pathlib import Path

    from debates import format_cards

    format_cards.save_card((Path(__file__).resolve().parents[2] / "cards" / "duel-card.yaml").read_text(), owner=None)
    options = {o["name"]: o["default"] for o in Api(people["other"]).get("/formats/duel-card").json()["options"]}
    query = "?" + "&".join(f"option_{name}={4 if name == 'turns' else value}" for name, value in options.items())
    page = text(page_client(people["other"]).get(reverse("format_detail", args=["duel-card"]) + query))
    plan = Api(people["other"]).get("/formats/duel-card/plan" + query).json()
    assert plan["options"]["turns"] == 4 and f"exactly {plan['calls']} LLM calls" in page
    assert len(plan["steps"]) == plan["calls"] and all(step["label"] in page for step in plan["steps"])
    assert Api(people["other"]).get("/formats/duel-card/plan").json()["options"]["turns"] == 6  # the default
    assert Api(people["other"]).get("/formats/no-such-card/plan").status_code == 404


def test_an_estimate_refuses_what_creating_would(people):
    import_personas(
        [(f"{n}.yaml", f"name: {n}\nrole: debater\npersonality: {n} argues.\n") for n in ("Ann", "Ben")]
        + [("j.yaml", "name: Jo\nrole: judge\npersonality: Jo judges.\njudging_criteria: Logic.\n")]
    )
    spec = {"name": "T", "debaters": ["Ann", "Ben"], "judges": ["Jo"], "questions": ["Tea?"], "repeats": 10**6}
    sized = Api(people["owner"]).post("/tournaments/estimate", spec)
    made = Api(people["owner"]).post("/tournaments", spec)
    assert sized.status_code == made.status_code == 422 and sized.json()["detail"] == made.json()["detail"]
