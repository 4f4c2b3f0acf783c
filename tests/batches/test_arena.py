"""What every arena does alike (audience/arena.py, audience/arena_views.py), for each kind's: one vote per voter and
debate, final once cast (the reveal follows it), a double click one vote; refusals that count nothing; a batch not
opted in served to nobody; a vote on a transcript that still names someone kept but not counted; the opt-in on the
new-batch form and in a spec, and the owner told when its debates would not be blind. Each kind's own tests (its
page, its reveal, its report's human figures) are in its test_arena.py."""

from __future__ import annotations

import html
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from audience.arena import Arena
from audience.poll_views import COOKIE
from batches import kinds
from batches.models import BatchRecord
from chaoslm.runner import inline
from debates.models import Debate
from experiments import design
from experiments.arena import ARENA as EVIDENCE_ARENA
from experiments.spec import read_spec as read_experiment_spec
from tests.batches.helpers import debater, judge
from tests.experiments import test_arena as experiments
from tests.tournaments import test_arena as tournaments
from tournaments.arena import ARENA as MATCH_ARENA
from tournaments.spec import read_spec as read_tournament_spec

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass(frozen=True)
class Kind:
    # Its finished batch in the arena: (owner, llm_server, names=, arena_on=, visibility=).
    finished: Callable[..., BatchRecord]
    arena: Arena[Any]
    urls: tuple[str, str, str]  # its arena's URL names: the random page, one debate's page, the vote
    none_yet: str  # its page while nothing is in the arena
    kept: str  # its batch's page once every vote is kept but not counted ({} the number of votes)

    @property
    def choices(self) -> list[str]:
        """Its vote's choices."""
        return [value for value, _ in self.arena.vote_model._meta.get_field("choice").choices]


KINDS = [
    pytest.param(
        Kind(
            experiments.finished,
            EVIDENCE_ARENA,
            ("evidence_arena", "evidence_arena_debate", "evidence_arena_vote"),
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
    return html.unescape(response.content.decode())


@pytest.mark.parametrize("kind", KINDS)
def test_one_vote_per_voter_and_debate_final_once_the_reveal_is_shown(kind, people, llm_server, runner_idle):
    batch = kind.finished(people["owner"], llm_server)
    item = kind.arena.items().first()
    vote, item_page = reverse(kind.urls[2], args=[item.pk]), reverse(kind.urls[1], args=[item.pk])
    first, second = kind.choices[:2]
    signed_in = Client()
    signed_in.force_login(people["other"])
    assert "it is final" in text(signed_in.get(item_page))  # said before the vote
    assert signed_in.post(vote, {"choice": first}).status_code == 302
    revealed = text(signed_in.get(item_page))
    assert "is final." in revealed and 'id="arena-vote"' not in revealed
    # The back button: the blind page's form posted again with another choice. Refused, and nothing changes.
    response = signed_in.post(vote, {"choice": second})
    assert response.status_code == 409 and text(response) == kind.arena.final
    # The same vote again (a double click) is the vote already counted.
    assert signed_in.post(vote, {"choice": first}).status_code == 302
    anonymous = Client()
    anonymous.post(vote, {"choice": second})
    assert anonymous.post(vote, {"choice": first}).status_code == 409
    votes = kind.arena.vote_model.objects
    anonymous_voter = votes.exclude(voter__startswith="user:").get().voter
    assert sorted(votes.values_list("voter", "choice")) == sorted(
        [(f"user:{people['other'].pk}", first), (anonymous_voter, second)]
    )
    owner = Client()
    owner.force_login(people["owner"])
    report = text(owner.get(reverse(f"{batch._meta.model_name}_detail", args=[batch.pk])))
    assert f"2 {kind.arena.vote_noun}s from 2 people" in report


@pytest.mark.parametrize("kind", KINDS)
def test_a_new_visitors_double_click_before_the_cookie_exists_is_one_vote(kind, people, llm_server, runner_idle):
    kind.finished(people["owner"], llm_server)
    item = kind.arena.items().first()
    page = text(Client().get(reverse(kind.urls[1], args=[item.pk])))
    ballot = re.search(r'name="ballot" value="([^"]+)"', page).group(1)
    vote = reverse(kind.urls[2], args=[item.pk])
    replies = [Client().post(vote, {"choice": kind.choices[0], "ballot": ballot}) for _ in range(2)]
    assert [r.status_code for r in replies] == [302, 302]
    assert kind.arena.vote_model.objects.count() == 1
    # Whichever of the two lands first, the other cannot change it: the same form with another choice is refused.
    assert Client().post(vote, {"choice": kind.choices[1], "ballot": ballot}).status_code == 409


@pytest.mark.parametrize("kind", KINDS)
def test_refusals_count_nothing(kind, people, llm_server, runner_idle, settings):
    batch = kind.finished(people["owner"], llm_server)
    page, item_page, vote_name = kind.urls
    item = kind.arena.items().first()
    vote = reverse(vote_name, args=[item.pk])
    choice = kind.choices[0]
    client = Client()
    response = client.post(vote, {"choice": "C"})
    assert response.status_code == 400 and kind.arena.bad_choice in text(response)
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
    settings.CHAOSLM_POLL_VOTES_PER_MINUTE = 1  # (0 is no limit)
    assert Client().post(vote, {"choice": "C"}).status_code == 400  # counted against the address all the same
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


# Each kind's new-batch form fields and spec lines, beside its name, debaters, judges and arena: (kind, fields, YAML,
# its spec reader).
OPT_IN = [
    pytest.param(
        "experiment",
        {"protocols": [design.DEBATE], "use_sample": "on", "rounds": 1, "word_limit": 80},
        "sample: true\nprotocols: [evidence_debate]\n",
        read_experiment_spec,
        id="experiment",
    ),
    pytest.param(
        "tournament",
        {"questions": "Tea?", "sides": "once", "repeats": 1, "option_turns": 2},
        'options: {turns: 2}\nquestions: ["Tea?"]\nsides: once\n',
        read_tournament_spec,
        id="tournament",
    ),
]


@pytest.mark.parametrize(("name", "fields", "lines", "read_spec"), OPT_IN)
def test_the_form_and_the_spec_opt_in(name, fields, lines, read_spec, people, monkeypatch, tmp_path):
    kind = kinds.KINDS[name]
    monkeypatch.setattr(kind, "start", lambda batch: None)
    ada, bob, judy = debater("Ada"), debater("Bob"), judge("Judy")
    client = Client()
    client.force_login(people["owner"])
    assert 'name="arena"' in text(client.get(reverse(f"{name}_new")))
    data = {"name": "Form batch", "debaters": [ada.pk, bob.pk], "judges": [judy.pk], **fields}
    data |= {"concurrency": 2, "visibility": "private", "arena": "on"}
    assert client.post(reverse(f"{name}_new"), data).status_code == 302
    assert kind.model.objects.get(name="Form batch").arena

    spec = tmp_path / "spec.yaml"
    body = f"name: CLI batch\ndebaters: [Ada, Bob]\njudges: [Judy]\n{lines}"
    spec.write_text(body + "arena: true\n")
    assert read_spec(spec).arena
    spec.write_text(body)
    assert not read_spec(spec).arena  # off by default
    spec.write_text(body + "arena: maybe\n")
    with pytest.raises(CommandError, match="arena: true or false"):
        call_command(name, "run", str(spec), stdout=io.StringIO())


@pytest.mark.parametrize("kind", KINDS)
def test_the_owner_is_told_plainly_that_a_public_or_unlisted_batchs_debates_are_not_blind(
    kind, people, llm_server, runner_idle
):
    batch = kind.finished(people["owner"], llm_server, arena_on=False, visibility="public")
    name = batch._meta.model_name
    owner = Client()
    owner.force_login(people["owner"])
    warning = f"This {batch._meta.verbose_name} is public, so its debates can be read with the debaters' names"
    assert warning in text(owner.get(reverse(f"{name}_detail", args=[batch.pk])))  # beside the button
    sent = text(owner.post(reverse(f"{name}_arena", args=[batch.pk]), {"arena": "on"}, follow=True))
    assert kind.arena.opted_in in sent and "in the arena they are not blind" in sent
    # Private: its named transcripts are its owner's alone, and nothing is said.
    kinds.KINDS[name].set_visibility(batch, "private")
    assert "not blind" not in text(owner.post(reverse(f"{name}_arena", args=[batch.pk]), {"arena": "on"}, follow=True))
