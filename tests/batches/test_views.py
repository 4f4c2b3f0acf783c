"""The views tournaments and experiments share (batches/views.py), for both kinds: the list (one's own,
the others' public ones), the exports at the batch's own address and at its share link (their files, types and
names; an unknown file is a 404), the owner's pause and cancel, and the owner's putting it in its arena."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from batches.checks import Contestant
from experiments import design
from experiments import services as experiment_services
from experiments.questions import sample
from tests.batches.helpers import debater, judge, questions
from tournaments import services as tournament_services

pytestmark = pytest.mark.django_db

FILES = {
    "tournament": {"report.json": "application/json", "matches.csv": "text/csv", "ratings.csv": "text/csv"},
    "experiment": {"report.json": "application/json", "runs.csv": "text/csv", "protocols.csv": "text/csv"},
}


def make(kind: str, owner, name: str, visibility: str, protocol: str = design.BLIND):
    """A batch of `kind`; an experiment runs `protocol` (one with an arena panel: an evidence debate)."""
    if kind == "tournament":
        return tournament_services.create_tournament(
            name=name,
            debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
            judges=[Contestant.of(judge("Judge Una"))],
            questions=questions(1),
            options={"turns": 2},
            owner=owner,
            visibility=visibility,
        )
    return experiment_services.create_experiment(
        name=name,
        questions=sample()[:1],
        protocols=[protocol],
        debaters=[] if protocol == design.BLIND else [Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[Contestant.of(judge("Judge Una"))],
        owner=owner,
        visibility=visibility,
    )


def client_of(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("kind", ["tournament", "experiment"])
def test_the_list_shows_ones_own_and_the_others_public_ones(kind, people):
    for owner, visibility in (("owner", "private"), ("other", "public"), ("other", "unlisted"), ("other", "private")):
        make(kind, people[owner], f"{owner}'s {visibility} one", visibility)
    url = reverse(f"{kind}_list")
    mine = client_of(people["owner"]).get(url).content.decode()
    yours, public = mine.split("<h2>Public</h2>")
    assert "owner&#x27;s private one" in yours and "other&#x27;s" not in yours
    assert "other&#x27;s public one" in public and "unlisted" not in public and "other&#x27;s private" not in public
    anonymous = client_of().get(url).content.decode()
    assert "<h2>Yours</h2>" not in anonymous and "other&#x27;s public one" in anonymous
    assert "owner&#x27;s private one" not in anonymous


@pytest.mark.parametrize("kind", ["tournament", "experiment"])
def test_the_exports_at_its_address_and_its_share_link(kind, people):
    unlisted = make(kind, people["owner"], "Shared", "unlisted")
    private = make(kind, people["owner"], "Kept", "private")
    owner, stranger = client_of(people["owner"]), client_of()
    for file, content_type in FILES[kind].items():
        for client, url in (
            (owner, reverse(f"{kind}_export", args=[unlisted.pk, file])),
            (stranger, reverse(f"{kind}_share_export", args=[unlisted.share_token, file])),
        ):
            response = client.get(url)
            assert response.status_code == 200, url
            assert response["Content-Type"].startswith(content_type)
            assert response["Content-Disposition"] == f'attachment; filename="{kind}-{unlisted.pk}-{file}"'
        # Who may not see it gets the same 404 as for one that does not exist.
        assert stranger.get(reverse(f"{kind}_export", args=[unlisted.pk, file])).status_code == 404
        assert stranger.get(reverse(f"{kind}_share_export", args=[private.share_token, file])).status_code == 404
    unknown = owner.get(reverse(f"{kind}_export", args=[unlisted.pk, "secrets.txt"]))
    assert unknown.status_code == 404 and unknown.content == b"No such export."
    assert "Content-Disposition" not in unknown


@pytest.mark.parametrize("kind", ["tournament", "experiment"])
def test_the_owners_pause_and_cancel(kind, people):
    batch = make(kind, people["owner"], "Acted on", "public")
    owner, other = client_of(people["owner"]), client_of(people["other"])
    assert other.post(reverse(f"{kind}_pause", args=[batch.pk])).status_code == 403
    assert owner.get(reverse(f"{kind}_pause", args=[batch.pk])).status_code == 405
    for action, status in (("pause", "paused"), ("cancel", "cancelled")):
        response = owner.post(reverse(f"{kind}_{action}", args=[batch.pk]))
        assert response.status_code == 302 and response["Location"] == reverse(f"{kind}_detail", args=[batch.pk])
        batch.refresh_from_db()
        assert batch.status == status


@pytest.mark.parametrize("kind", ["tournament", "experiment"])
def test_staff_manage_the_sharing_of_a_batch_that_has_no_owner(kind, people, django_user_model):
    """A batch made on the command line may belong to nobody: staff see its share link and change who sees it."""
    batch = make(kind, None, "Orphan", "unlisted")
    staff = django_user_model.objects.create_user("staffer", password="pw-staff-123", is_staff=True)
    page = client_of(staff).get(reverse(f"{kind}_detail", args=[batch.pk])).content.decode()
    assert f"/{batch.share_token}/" in page and reverse(f"{kind}_visibility", args=[batch.pk]) in page
    response = client_of(staff).post(reverse(f"{kind}_visibility", args=[batch.pk]), {"visibility": "public"})
    assert response.status_code == 302
    batch.refresh_from_db()
    assert batch.visibility == "public"
    old = batch.share_token
    assert client_of(staff).post(reverse(f"{kind}_share_reset", args=[batch.pk])).status_code == 302
    batch.refresh_from_db()
    assert batch.share_token != old
    # Anyone else who may see it still may not change it.
    refused = client_of(people["other"]).post(reverse(f"{kind}_visibility", args=[batch.pk]), {"visibility": "private"})
    assert refused.status_code == 403


@pytest.mark.parametrize("kind", ["tournament", "experiment"])
@pytest.mark.parametrize("who, status", [("anonymous", 302), ("other", 404), ("owner", 302)])
def test_only_the_owner_puts_a_batch_in_the_arena(kind, people, who, status):
    batch = make(kind, people["owner"], "Voted on", "private", protocol=design.DEBATE)
    assert not batch.arena  # off by default
    client = client_of(None if who == "anonymous" else people[who])
    response = client.post(reverse(f"{kind}_arena", args=[batch.pk]), {"arena": "on"})
    assert response.status_code == status
    batch.refresh_from_db()
    assert batch.arena == (who == "owner")
    if who == "owner":
        assert client.post(reverse(f"{kind}_arena", args=[batch.pk]), {"arena": "maybe"}).status_code == 400
        page = client.get(reverse(f"{kind}_detail", args=[batch.pk])).content.decode()
        # Once in, the page offers to take it out, and the people's figures among the exports.
        human_export = {"tournament": "Human ratings (CSV)", "experiment": "People against the judges"}[kind]
        assert "Take them out of the arena" in page and human_export in page


@pytest.mark.parametrize("kind, snapshots", [("tournament", "entrants"), ("experiment", "participants")])
def test_staff_put_a_batch_in_the_arena_in_the_admin(kind, snapshots, django_user_model):
    batch = make(kind, None, "League", "private", protocol=design.DEBATE)
    client = client_of(django_user_model.objects.create_superuser("boss", password="pw-boss-123"))
    url = reverse(f"admin:{batch._meta.app_label}_{kind}_change", args=[batch.pk])
    assert 'name="arena"' in client.get(url).content.decode()
    forms = {
        f"{prefix}-{key}": value
        for prefix in (snapshots, "questions")
        for key, value in (("TOTAL_FORMS", 0), ("INITIAL_FORMS", 0), ("MIN_NUM_FORMS", 0), ("MAX_NUM_FORMS", 1000))
    }
    response = client.post(url, {"name": "League", "visibility": "private", "arena": "on", **forms})
    assert response.status_code == 302
    batch.refresh_from_db()
    assert batch.arena and batch.name == "League"
