"""Tournaments in the admin: listed and readable, their name editable, what the run reads read-only."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from debates.models import Debate
from tests.batches.helpers import debater, judge, questions
from tournaments import services
from tournaments.models import Judgment, Match, Tournament

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client():
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("boss", password="pw-boss-123"))
    return client


@pytest.fixture
def tournament():
    return services.create_tournament(
        name="League",
        debaters=[services.Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[services.Contestant.of(judge("Judge Una"))],
        questions=questions(2),
        options={"turns": 2},
    )


def test_tournaments_are_listed_with_their_matches_and_judgments(admin_client, tournament):
    index = admin_client.get(reverse("admin:index")).content.decode()
    assert reverse("admin:tournaments_tournament_changelist") in index
    assert reverse("admin:tournaments_match_changelist") in index
    listing = admin_client.get(reverse("admin:tournaments_tournament_changelist")).content.decode()
    assert "League" in listing
    page = admin_client.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk])).content.decode()
    assert 'name="name"' in page and 'name="options"' not in page and 'name="concurrency"' not in page
    assert "Alice" in page and "Question 0?" in page  # entrants and questions, read-only inline
    matches = admin_client.get(reverse("admin:tournaments_match_changelist")).content.decode()
    assert "Question 1?" in matches and "Alice" in matches and "Bob" in matches
    judgments = admin_client.get(reverse("admin:tournaments_judgment_changelist"))
    assert judgments.status_code == 200


def test_only_the_name_changes(admin_client, tournament):
    url = reverse("admin:tournaments_tournament_change", args=[tournament.pk])
    data = {
        "name": "Spring league",
        "visibility": "private",
        "concurrency": 99,
        "options": '{"turns": 9}',
        "status": "completed",
        **{
            f"{prefix}-{key}": value
            for prefix in ("entrants", "questions")
            for key, value in (("TOTAL_FORMS", 0), ("INITIAL_FORMS", 0), ("MIN_NUM_FORMS", 0), ("MAX_NUM_FORMS", 1000))
        },
    }
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    tournament.refresh_from_db()
    assert tournament.name == "Spring league"
    assert tournament.concurrency == 8 and tournament.options == {"turns": 2} and tournament.status == "running"


def test_nothing_of_a_run_is_added_or_changed_by_hand(admin_client, tournament):
    assert admin_client.get(reverse("admin:tournaments_tournament_add")).status_code == 403
    match = Match.objects.filter(tournament=tournament).first()
    url = reverse("admin:tournaments_match_change", args=[match.pk])
    assert admin_client.get(url).status_code == 200  # to read
    assert admin_client.post(url, {"order": 99}).status_code == 403
    assert admin_client.get(reverse("admin:tournaments_match_delete", args=[match.pk])).status_code == 403
    judgment = Judgment.objects.filter(match=match).first()
    assert admin_client.post(reverse("admin:tournaments_judgment_change", args=[judgment.pk]), {}).status_code == 403
    match.refresh_from_db()
    assert match.order != 99


def test_deleting_one_in_the_admin_takes_its_debates_with_it(admin_client, tournament):
    services.TOURNAMENT.advance(tournament.pk, start=lambda debate_id: None)  # its first duels exist, not running
    debate_ids = list(Match.objects.exclude(debate=None).values_list("debate", flat=True))
    assert debate_ids
    response = admin_client.post(reverse("admin:tournaments_tournament_delete", args=[tournament.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not Tournament.objects.exists() and not Debate.objects.filter(pk__in=debate_ids).exists()


def test_the_admin_says_matches(admin_client, tournament):
    index = admin_client.get(reverse("admin:index")).content.decode()
    assert ">Matches<" in index and "Matchs" not in index


def test_staff_manage_any_batchs_sharing_in_the_admin(admin_client, tournament):
    services.TOURNAMENT.advance(tournament.pk, start=lambda debate_id: None)
    url = reverse("admin:tournaments_tournament_change", args=[tournament.pk])
    assert "none while it is private" in admin_client.get(url).content.decode()
    data = {
        "name": "League",
        "visibility": "unlisted",
        **{
            f"{prefix}-{key}": value
            for prefix in ("entrants", "questions")
            for key, value in (("TOTAL_FORMS", 0), ("INITIAL_FORMS", 0), ("MIN_NUM_FORMS", 0), ("MAX_NUM_FORMS", 1000))
        },
    }
    assert admin_client.post(url, data).status_code == 302
    tournament.refresh_from_db()
    # Through its kind: its debates are seen where it is.
    assert tournament.visibility == "unlisted"
    assert set(Debate.objects.values_list("visibility", flat=True)) == {"unlisted"}
    page = admin_client.get(url).content.decode()
    assert f"http://127.0.0.1:8000/ts/{tournament.share_token}/" in page
    old = tournament.share_token
    changelist = reverse("admin:tournaments_tournament_changelist")
    response = admin_client.post(changelist, {"action": "new_share_link", "_selected_action": [tournament.pk]})
    assert response.status_code == 302
    tournament.refresh_from_db()
    assert tournament.share_token != old
