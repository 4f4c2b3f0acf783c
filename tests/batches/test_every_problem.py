"""A batch spec's problems are told all at once, on the command line and over the API alike: those of its reading
(a persona that does not exist) and those of the rules its create checks (repeats, concurrency), not the first
alone; a rule's problem about a key already refused is not told again about the stand-in."""

from __future__ import annotations

import json

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from api.tokens import create_token
from batches.spec import SpecErrors, checked, spec_arguments
from experiments import services as experiment_services
from experiments import spec as experiment_spec
from tests.batches.helpers import debater, judge
from tournaments import services as tournament_services
from tournaments import spec as tournament_spec
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

UNKNOWN = "spec: debaters[3]: no persona is named 'Nobody Here' (known: "


@pytest.fixture
def panel(db):
    for name in ("Ada Sterling", "Marcus Vale"):
        debater(name)
    judge("Judge Ines Okafor")


def tournament(**changes):
    return {
        "name": "Cup",
        "debaters": ["Ada Sterling", "Marcus Vale", "Nobody Here"],
        "judges": ["Judge Ines Okafor"],
        "questions": ["Should cities ban private cars?"],
        "repeats": 0,
        "concurrency": 0,
        **changes,
    }


def read_tournament(body):
    return checked(
        lambda: tournament_spec.from_mapping(body, None, "spec"),
        lambda spec: tournament_services.check_tournament(**spec_arguments(spec)),
    )


def test_an_unknown_debater_zero_repeats_and_zero_concurrency_are_told_together(panel):
    with pytest.raises(SpecErrors) as raised:
        read_tournament(tournament())
    fields = [field for field, _ in raised.value.problems]
    messages = [message for _, message in raised.value.problems]
    assert fields == ["debaters", "concurrency", "repeats"]
    assert messages[0].startswith(UNKNOWN)
    assert messages[1:] == ["Concurrency must be between 1 and 100.", "Repeats must be between 1 and 10."]


def test_a_rule_about_a_refused_key_is_not_told_of_its_stand_in(panel):
    # Two debaters read well of the three: "needs at least two" would be about the stand-in, not the spec.
    with pytest.raises(SpecErrors) as raised:
        read_tournament(tournament(debaters=["Ada Sterling", "Nobody Here"], repeats=1, concurrency=8))
    assert [field for field, _ in raised.value.problems] == ["debaters"]


def test_a_spec_that_reads_well_gets_every_rule_it_breaks(panel):
    with pytest.raises(tournament_services.TournamentError) as raised:
        read_tournament(tournament(debaters=["Ada Sterling", "Marcus Vale"], sides="thrice"))
    assert [(p.keys[0], p.message) for p in raised.value.problems] == [
        ("concurrency", "Concurrency must be between 1 and 100."),
        ("sides", "Sides must be 'both' or 'once'."),
        ("repeats", "Repeats must be between 1 and 10."),
    ]
    assert str(raised.value) == (
        "Concurrency must be between 1 and 100. Sides must be 'both' or 'once'. Repeats must be between 1 and 10."
    )


def test_an_experiment_spec_tells_every_problem_too(panel):
    body = {
        "name": "Study",
        "sample": True,
        "protocols": ["evidence_debate"],
        "debaters": ["Nobody Here"],
        "judges": ["Judge Ines Okafor"],
        "concurrency": 0,
        "options": {"rounds": 99},
    }
    with pytest.raises(SpecErrors) as raised:
        checked(
            lambda: experiment_spec.from_mapping(body, None, "spec"),
            lambda spec: experiment_services.check_experiment(**spec_arguments(spec)),
        )
    fields = [field for field, _ in raised.value.problems]
    # Not "an evidence debate needs two debaters": the one named is refused already.
    assert fields == ["debaters", "options", "concurrency"]
    assert raised.value.problems[1][1].startswith("Rounds must be a whole number from ")


def test_the_command_line_prints_them_all_and_makes_nothing(panel, tmp_path):
    path = tmp_path / "cup.yaml"
    path.write_text(yaml.safe_dump(tournament()))
    with pytest.raises(CommandError) as raised:
        call_command("tournament", "run", str(path))
    message = str(raised.value)
    assert f"{path}: debaters[3]: no persona is named 'Nobody Here'" in message
    assert message.endswith("; Concurrency must be between 1 and 100.; Repeats must be between 1 and 10.")
    assert not Tournament.objects.exists()


@pytest.mark.parametrize("path", ["/tournaments", "/tournaments/estimate"])
def test_the_api_lists_them_all_each_on_its_key(client, people, panel, path):
    _, secret = create_token(people["owner"], "every", read_only=False)
    reply = client.post(
        "/api/v1" + path,
        json.dumps(tournament()),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert reply.status_code == 422, reply.content
    errors = reply.json()["errors"]
    assert [e["field"] for e in errors] == ["debaters", "concurrency", "repeats"]
    assert errors[0]["message"].startswith(UNKNOWN)
    assert [e["message"] for e in errors[1:]] == [
        "Concurrency must be between 1 and 100.",
        "Repeats must be between 1 and 10.",
    ]
    assert not Tournament.objects.exists()
