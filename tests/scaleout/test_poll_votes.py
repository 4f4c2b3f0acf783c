"""The same signed-in vote posted 20 times at once, to two web processes on one PostgreSQL database: one vote counts.

Each request is its own thread and database connection in its own process: the unique constraint and the
single INSERT ... ON CONFLICT DO UPDATE of audience/votes.py must leave one row, and no request may fail.
"""

import json
from concurrent.futures import ThreadPoolExecutor

import httpx2 as httpx
import psycopg
import pytest

pytestmark = pytest.mark.scaleout

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from debates.models import Debate, Seat, Event

user = get_user_model().objects.create_user("voter", password="pw-voter-123")
debate = Debate.objects.create(topic="Cars?", format="duel", visibility="public", status="running", audience_poll=True)
for i, (key, side, name) in enumerate([("a", "for", "Ada"), ("b", "against", "Bob")]):
    Seat.objects.create(debate=debate, key=key, role="debater", side=side, name=name, order=i)
Event.objects.create(debate=debate, ordinal=0, kind="HEADER", content="Cars?")
session = SessionStore()
session["_auth_user_id"] = str(user.pk)
session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
session["_auth_user_hash"] = user.get_session_auth_hash()
session.create()
print(json.dumps({"debate": debate.pk, "session": session.session_key, "user": user.pk}))
"""


def test_twenty_copies_of_one_signed_in_vote_at_once_count_once(stack):
    stack.env["CHAOSLM_POLL_VOTES_PER_MINUTE"] = "1000"
    made = json.loads(stack.manage("shell", "-c", SETUP).stdout.strip().splitlines()[-1])
    webs = [stack.start_web(), stack.start_web()]
    csrf = "a" * 32  # a CSRF secret: the cookie and the header must match
    cookies = {"sessionid": made["session"], "csrftoken": csrf}

    def post(i: int) -> int:
        url = f"{webs[i % 2]}/debates/{made['debate']}/poll/vote/"
        response = httpx.post(
            url,
            data={"phase": "before", "choice": "a"},
            cookies=cookies,
            headers={"X-CSRFToken": csrf, "HX-Request": "true"},
            timeout=30,
        )
        return response.status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(post, range(20)))
    assert statuses == [200] * 20
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        rows = connection.execute(
            "SELECT voter, phase, choice FROM audience_pollvote WHERE debate_id = %s", [made["debate"]]
        ).fetchall()
    assert rows == [(f"user:{made['user']}", "before", "a")]


ARENA_SETUP = """
import json
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from debates.models import Debate, Seat, Event
from tournaments.models import Entrant, Match, Question, Tournament

user = get_user_model().objects.create_user("voter", password="pw-voter-123")
tournament = Tournament.objects.create(name="Arena", arena=True, status="completed")
a, b = (
    Entrant.objects.create(tournament=tournament, role="debater", order=i, name=name, spec={"name": name})
    for i, name in enumerate(["Ada Sterling", "Marcus Vale"])
)
question = Question.objects.create(tournament=tournament, index=0, topic="Cars?")
debate = Debate.objects.create(topic="Cars?", format="duel", status="completed", in_batch=True)
for i, (key, side, name) in enumerate([("a", "for", "Ada Sterling"), ("b", "against", "Marcus Vale")]):
    seat = Seat.objects.create(debate=debate, key=key, role="debater", side=side, name=name, order=i)
    Event.objects.create(debate=debate, seat=seat, ordinal=i + 1, kind="TURN", step="opening", content=f"I am {name}.")
match = Match.objects.create(tournament=tournament, order=0, question=question, debater_for=a, debater_against=b,
                             debate=debate)
session = SessionStore()
session["_auth_user_id"] = str(user.pk)
session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
session["_auth_user_hash"] = user.get_session_auth_hash()
session.create()
print(json.dumps({"item": match.pk, "session": session.session_key, "user": user.pk}))
"""


EVIDENCE_SETUP = """
import json
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from debates.models import Debate, Seat, Event
from experiments.models import Experiment, Participant, Question, Run

user = get_user_model().objects.create_user("voter", password="pw-voter-123")
experiment = Experiment.objects.create(name="Arena", arena=True, status="completed", protocols=["evidence_debate"])
a, b, judge = (
    Participant.objects.create(experiment=experiment, role=role, order=i, name=name, spec={"name": name})
    for i, (role, name) in enumerate([("debater", "Ada Sterling"), ("debater", "Marcus Vale"), ("judge", "Judy")])
)
answers = ["Floods", "Space"]
question = Question.objects.create(experiment=experiment, index=0, passage="Floods.", question="Why?", answers=answers,
                                   correct=0)
debate = Debate.objects.create(topic="Why?", format="evidence_debate", status="completed", in_batch=True,
                               options={"passage": "Floods.", "question": "Why?", "answers": answers, "rounds": 1})
for i, (key, side, name) in enumerate([("a", "A", "Ada Sterling"), ("b", "B", "Marcus Vale")]):
    seat = Seat.objects.create(debate=debate, key=key, role="debater", side=side, name=name, order=i)
    Event.objects.create(debate=debate, seat=seat, ordinal=i + 3, kind="TURN", step="speech", content=f"I am {name}.",
                         data={"round": 1})
run = Run.objects.create(experiment=experiment, order=0, question=question, protocol="evidence_debate", judge=judge,
                         first=a, second=b, debate=debate)
session = SessionStore()
session["_auth_user_id"] = str(user.pk)
session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
session["_auth_user_hash"] = user.get_session_auth_hash()
session.create()
print(json.dumps({"item": run.pk, "session": session.session_key, "user": user.pk}))
"""


@pytest.mark.parametrize(
    "setup, at, choice, table, item",
    [
        (ARENA_SETUP, "arena/", "2", "tournaments_arenavote", "match_id"),
        (EVIDENCE_SETUP, "arena/evidence/", "A", "experiments_arenavote", "run_id"),
    ],
    ids=["tournament", "evidence"],
)
def test_twenty_copies_of_one_signed_in_arena_vote_at_once_count_once(stack, setup, at, choice, table, item):
    stack.env["CHAOSLM_POLL_VOTES_PER_MINUTE"] = "1000"
    made = json.loads(stack.manage("shell", "-c", setup).stdout.strip().splitlines()[-1])
    webs = [stack.start_web(), stack.start_web()]
    csrf = "a" * 32
    cookies = {"sessionid": made["session"], "csrftoken": csrf}

    def post(i: int) -> int:
        response = httpx.post(
            f"{webs[i % 2]}/{at}{made['item']}/vote/",
            data={"choice": choice},
            cookies=cookies,
            headers={"X-CSRFToken": csrf},
            timeout=30,
        )
        return response.status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(post, range(20)))
    assert statuses == [302] * 20
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        rows = connection.execute(
            f"SELECT voter, choice, excluded FROM {table} WHERE {item} = %s", [made["item"]]
        ).fetchall()
    assert rows == [(f"user:{made['user']}", choice, False)]


@pytest.mark.parametrize(
    "setup, address, data, table, item",
    [
        (SETUP, "debates/{}/poll/vote/", {"phase": "before", "choice": "a"}, "audience_pollvote", "debate_id"),
        (ARENA_SETUP, "arena/{}/vote/", {"choice": "2"}, "tournaments_arenavote", "match_id"),
        (EVIDENCE_SETUP, "arena/evidence/{}/vote/", {"choice": "A"}, "experiments_arenavote", "run_id"),
    ],
    ids=["poll", "tournament", "evidence"],
)
def test_a_new_visitors_first_vote_posted_twenty_times_at_once_before_any_cookie_counts_once(
    stack, setup, address, data, table, item
):
    """No session, no voter cookie: only the form's ballot token says these twenty posts are one double click."""
    stack.env["CHAOSLM_POLL_VOTES_PER_MINUTE"] = "1000"
    made = json.loads(stack.manage("shell", "-c", setup).stdout.strip().splitlines()[-1])
    thing = made.get("item", made.get("debate"))
    webs = [stack.start_web(), stack.start_web()]
    csrf = "a" * 32
    ballot = "b" * 24  # what the page's form carried (audience/poll_views.py: new_ballot)

    def post(i: int) -> httpx.Response:
        return httpx.post(
            f"{webs[i % 2]}/{address.format(thing)}",
            data={**data, "ballot": ballot},
            cookies={"csrftoken": csrf},
            headers={"X-CSRFToken": csrf},
            timeout=30,
        )

    with ThreadPoolExecutor(max_workers=20) as pool:
        replies = list(pool.map(post, range(20)))
    assert [r.status_code for r in replies] == [302] * 20
    # Every reply sets the same voter's cookie, so what follows from any of them is that one voter.
    voters = {r.cookies["chaoslm_voter"].split(":")[0] for r in replies}  # the signed payload
    assert len(voters) == 1
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        rows = connection.execute(f"SELECT voter FROM {table} WHERE {item} = %s", [thing]).fetchall()
    assert len(rows) == 1 and rows[0][0].startswith("anon:")
