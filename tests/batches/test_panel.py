"""One check of a batch's panel, options and run settings for every kind (batches/checks.py): a yes/no is no whole
number, for a tournament as for an experiment and a format's own check (`Format.validate`)."""

from __future__ import annotations

import pytest

from batches.checks import BatchError, Contestant
from experiments import services as experiments
from experiments.questions import sample
from tests.batches.helpers import debater, judge, questions
from tournaments import services as tournaments

pytestmark = pytest.mark.django_db


def _tournament(options):
    return tournaments.create_tournament(
        name="Bools",
        debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[Contestant.of(judge("Judge Una"))],
        questions=questions(1),
        options=options,
    )


def _experiment(options):
    return experiments.create_experiment(
        name="Bools",
        questions=sample()[:1],
        protocols=["evidence_debate"],
        debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[Contestant.of(judge("Judge Una"))],
        options=options,
    )


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("make", [_tournament, _experiment], ids=["tournament", "experiment"])
def test_a_yes_or_no_is_no_whole_number_for_any_kind(make, value):
    with pytest.raises(BatchError, match=r"^Word limit must be a whole number from 0 to \d+\.$"):
        make({"word_limit": value})


@pytest.mark.parametrize(
    ("make", "error"),
    [(_tournament, tournaments.TournamentError), (_experiment, experiments.ExperimentError)],
    ids=["tournament", "experiment"],
)
def test_each_kind_raises_its_own_error_from_the_shared_check(make, error):
    with pytest.raises(error, match=r"^There is no option 'colour'; the options are "):
        make({"colour": 1})
