"""What every arena does alike (batches/arena.py, batches/arena_views.py), for each kind's: one vote per person and
debate, the last one counting; refusals that count nothing; a batch not opted in served to nobody; a vote on a
transcript that still names someone kept but not counted. Each kind's own tests (its page, its reveal, its report's
human figures) are in its test_arena.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from batches.arena import Arena
from batches.models import BatchRecord
from chaoslm.runner import inline
from debates.models import Debate
from debates.poll_views import COOKIE
from experiments.arena import ARENA as EVIDENCE_ARENA
from tests.experiments import test_arena as experiments
from tests.tournaments import test_arena as tournaments
from tournaments.arena import ARENA as MATCH_ARENA

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass(frozen=True)
class Kind:
    # Its finished batch in the arena: (owner, llm_server, names=, arena_on=, visibility=).
    finished: Callable[..., BatchRecord]
    arena: Arena[Any]
    urls: tuple[str, str, str]  # its arena's URL names: the random page, one debate's page, the vote
    choices: tuple[str, str, str]  # three of its vote's choices
    refused: str  # the message on a choice that is none
    none_yet: str  # its page while nothing is in the arena
    kept: str  # its batch's page once every vote is kept but not counted ({} the number of votes)


KINDS = [
    pytest.param(
        Kind(
            experiments.finished,
            EVIDENCE_ARENA,
            ("evidence_arena", "evidence_arena_debate", "evidence_arena_vote"),
            ("A", "B", "A"),
            "Pick answer A or answer B",
            "No evidence debate is in the arena yet",
            "0 answers from 0 people on 0 evidence debates; {} more kept but not counted",
        ),
        id="experiment",
    ),
    pytest.param(
        Kind(
            tournaments.finished,
            MATCH_ARENA,
            ("arena", "arena_match", "arena_vote"),
            ("1", "2", "tie"),
            "Pick Debater 1, Debater 2 or a tie",
            "No match is in the arena yet",
            "0 votes from 0 people on 0 matches; {} more kept but not counted",
        ),
        id="tournament",
    ),
]


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle()


def text(response) -> str:
    return response.content.decode()


@pytest.mark.parametrize("kind", KINDS)
def test_one_vote_per_person_and_debate_the_last_counts(kind, people, llm_server, runner_idle):
    kind.finished(people["owner"], llm_server)
    vote = reverse(kind.urls[2], args=[kind.arena.items().first().pk])
    first, second, third = kind.choices
    signed_in = Client()
    signed_in.force_login(people["other"])
    for choice in (first, second, second):
        assert signed_in.post(vote, {"choice": choice}).status_code == 302
    anonymous = Client()
    anonymous.post(vote, {"choice": second})
    anonymous.post(vote, {"choice": third})
    votes = kind.arena.vote_model.objects
    anonymous_voter = votes.exclude(voter__startswith="user:").get().voter
    assert sorted(votes.values_list("voter", "choice")) == sorted(
        [(f"user:{people['other'].pk}", second), (anonymous_voter, third)]
    )


@pytest.mark.parametrize("kind", KINDS)
def test_refusals_count_nothing(kind, people, llm_server, runner_idle, settings):
    batch = kind.finished(people["owner"], llm_server)
    page, item_page, vote_name = kind.urls
    item = kind.arena.items().first()
    vote = reverse(vote_name, args=[item.pk])
    choice = kind.choices[0]
    client = Client()
    response = client.post(vote, {"choice": "C"})
    assert response.status_code == 400 and kind.refused in text(response)
    # Its batch left the arena, or there is no such debate.
    type(batch).objects.filter(pk=batch.pk).update(arena=False)
    response = client.post(vote, {"choice": choice})
    assert response.status_code == 404 and "not in the arena" in text(response)
    assert client.get(reverse(item_page, args=[item.pk])).status_code == 404
    assert client.post(reverse(vote_name, args=[999999]), {"choice": choice}).status_code == 404
    assert kind.none_yet in text(client.get(reverse(page)))
    type(batch).objects.filter(pk=batch.pk).update(arena=True)
    # A debate that has not completed is not in it either.
    Debate.objects.filter(pk=item.debate_id).update(status=Debate.Status.RUNNING)
    assert client.post(vote, {"choice": choice}).status_code == 404
    Debate.objects.filter(pk=item.debate_id).update(status=Debate.Status.COMPLETED)
    # A forged cookie: refused and cleared.
    client.cookies[COOKIE] = "anon:forged:signature"
    response = client.post(vote, {"choice": choice})
    assert response.status_code == 400 and "could not be verified" in text(response)
    assert response.cookies[COOKIE].value == ""
    # A GET is not a vote, nor a post without the CSRF token.
    assert Client().get(vote).status_code == 405
    assert Client(enforce_csrf_checks=True).post(vote, {"choice": choice}).status_code == 403
    # Past the per-address limit (the polls' and both arenas' together): 429.
    settings.CHAOSLM_POLL_VOTES_PER_MINUTE = 0
    assert Client().post(vote, {"choice": choice}).status_code == 429
    assert not kind.arena.vote_model.objects.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_not_opted_in_is_not_served_whatever_its_visibility(kind, people, llm_server, runner_idle):
    batch = kind.finished(people["owner"], llm_server, arena_on=False, visibility="public")
    assert kind.none_yet in text(Client().get(reverse(kind.urls[0])))
    item = kind.arena.items().model.objects.filter(**{batch._meta.model_name: batch}).first()
    assert Client().post(reverse(kind.urls[2], args=[item.pk]), {"choice": kind.choices[0]}).status_code == 404
    assert not kind.arena.vote_model.objects.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_vote_on_a_transcript_that_still_names_someone_is_kept_excluded_and_counted(
    kind, people, llm_server, runner_idle
):
    batch = kind.finished(people["owner"], llm_server, names=("Al", "Bob Marlowe"))
    client = Client()
    items = list(kind.arena.items())
    assert items
    for item in items:
        assert "A name may remain in this transcript" in text(client.get(reverse(kind.urls[1], args=[item.pk])))
        response = client.post(reverse(kind.urls[2], args=[item.pk]), {"choice": kind.choices[1]}, follow=True)
        assert "so it is not counted" in text(response)
    assert list(kind.arena.vote_model.objects.values_list("excluded", flat=True)) == [True] * len(items)
    owner = Client()
    owner.force_login(people["owner"])
    name = batch._meta.model_name
    assert kind.kept.format(len(items)) in text(owner.get(reverse(f"{name}_detail", args=[batch.pk])))
