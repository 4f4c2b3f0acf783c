"""Words and layout a newcomer meets on the forms that start a batch (a tournament, an experiment) and in a room, as a
fresh walk through the site found them."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from rooms.models import Room
from tests.batches.helpers import debater, judge

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client():
    client = Client()
    client.force_login(get_user_model().objects.create_user("olive", password="pw-olive-123"))
    return client


def test_an_estimate_on_models_of_unknown_price_says_the_cost_is_unknown(llm_server, owner_client):
    people = [debater("Ada"), debater("Bob"), judge("Jo")]
    form = {
        "name": "Tiny",
        "debaters": [people[0].pk, people[1].pk],
        "judges": [people[2].pk],
        "questions": "Should cities ban cars?",
        "sides": "once",
        "repeats": 1,
        "option_turns": 2,
        "concurrency": 2,
        "visibility": "private",
        "formats": ["duel"],
    }
    line = owner_client.post(reverse("tournament_estimate"), form).content.decode()

    assert "Its cost is unknown: " in line and "none of its models has a known price." in line
    assert "cost about" not in line and "unknown price" not in line


def test_the_tournament_moderator_picker_says_what_empty_means(owner_client):
    html = owner_client.get(reverse("tournament_new")).content.decode()
    assert '<option value="" selected>— no moderator —</option>' in html
    assert "---------" not in html


def test_the_experiment_forms_checkboxes_sit_on_their_labels_line(owner_client):
    html = owner_client.get("/experiments/new/").content.decode()
    assert '<div class="field check"><input type="checkbox" name="use_sample"' in html
    assert '<div class="field check"><input type="checkbox" name="simultaneous"' in html


def test_a_rooms_memory_choices_are_in_plain_words():
    assert dict(Room.Memory.choices) == {
        "summarize": "summarise at 80 % (fold the oldest messages)",
        "stop": "stop auto mode at 95 % (no summary)",
    }


def test_a_tournament_option_left_empty_says_each_format_keeps_its_own_default(owner_client):
    # The shipped cards' word limits differ from the built-ins' (0: none), so the form leaves the box empty.
    call_command("import_formats", "cards/", verbosity=0)
    html = owner_client.get(reverse("tournament_new")).content.decode()
    word_limit = html.split('name="option_word_limit"')[1].split("</div>")[0]
    assert 'value="' not in word_limit.split(">")[0]
    assert "Left empty: each format&#x27;s own default." in word_limit
