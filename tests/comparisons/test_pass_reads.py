"""A comparison's pass reads the runs in flight and only as many of those not begun as it could start: the plan it
makes from them is the one it would make from every run."""

from __future__ import annotations

import dataclasses

import pytest

from batches import kinds, schedule
from batches.checks import Contestant
from batches.progress import settings_of
from comparisons import arithmetic, selectors, services
from comparisons.arms import ArmRequest
from comparisons.kind import COMPARISON
from comparisons.models import Comparison, Run
from debates.models import Debate
from tests.batches.helpers import debater
from tests.comparisons.helpers import import_shipped_cards

pytestmark = pytest.mark.django_db(transaction=True)


def plans(comparison: Comparison) -> tuple[schedule.Decision, schedule.Decision]:
    """The plan from the jobs a pass reads, and from every job, without their progress (which counts what is read)."""
    comparison.refresh_from_db()
    wanted = settings_of(comparison)
    read = schedule.plan(wanted, selectors.jobs(comparison, open_only=True))
    every = schedule.plan(wanted, selectors.jobs(comparison))
    return dataclasses.replace(read, progress=schedule.Progress()), dataclasses.replace(
        every, progress=schedule.Progress()
    )


def test_a_pass_reads_what_is_in_flight_and_as_many_waiting_runs_as_it_could_start():
    import_shipped_cards()
    comparison = services.create_comparison(
        name="Reads",
        questions=arithmetic.generate(12, 3, 0),
        arms=[ArmRequest("single-agent", Contestant.of(debater("Ada")))],
        concurrency=3,
    )
    read, every = plans(comparison)
    assert read == every and len(read.create) == 3
    assert len(selectors.jobs(comparison, open_only=True)) == 3

    COMPARISON.advance(comparison.pk, start=lambda debate_id: None)  # three debates made, none run
    runs = list(Run.objects.filter(comparison=comparison).order_by("order"))
    assert [r.debate_id is not None for r in runs[:4]] == [True, True, True, False]
    assert len(selectors.jobs(comparison, open_only=True)) == 3 + 3
    read, every = plans(comparison)
    assert read == every and not read.create and not read.settled

    # One completed, one failed, one interrupted; the next waiting run could not be made: failed for good.
    for run, status in zip(runs[:3], ["completed", "error", "interrupted"], strict=True):
        Debate.objects.filter(pk=run.debate_id).update(status=status)
    Run.objects.filter(pk=runs[3].pk).update(attempts=schedule.MAX_ATTEMPTS)
    read, every = plans(comparison)
    assert read == every
    assert [j.id for j in read.retry] == [runs[1].pk] and [j.id for j in read.resume] == [runs[2].pk]
    assert [j.id for j in read.create] == [runs[4].pk]

    # Every run but the last done: the last still starts, and once it completes the comparison is settled.
    Debate.objects.filter(pk__in=[r.debate_id for r in runs[:3]]).update(status="completed")
    for run in runs[4:-1]:
        run.debate = Debate.objects.create(format="single-agent", topic="t", status="completed")
        run.save(update_fields=["debate"])
    read, every = plans(comparison)
    assert read == every and [j.id for j in read.create] == [runs[-1].pk] and not read.settled
    Run.objects.filter(pk=runs[-1].pk).update(attempts=schedule.MAX_ATTEMPTS)
    read, every = plans(comparison)
    assert read == every and read.settled


def test_a_finished_debate_s_batch_is_found_in_one_query_and_kept_for_the_other_hooks(django_assert_num_queries):
    import_shipped_cards()
    comparison = services.create_comparison(
        name="Found",
        questions=arithmetic.generate(2, 3, 0),
        arms=[ArmRequest("single-agent", Contestant.of(debater("Ada")))],
        concurrency=2,
    )
    COMPARISON.advance(comparison.pk, start=lambda debate_id: None)
    debate = Run.objects.filter(comparison=comparison).first().debate
    with django_assert_num_queries(1):
        assert kinds.batch_of(debate) == (COMPARISON, comparison.pk)
    with django_assert_num_queries(0):
        assert kinds.batch_of(debate) == (COMPARISON, comparison.pk)
    assert kinds.batch_of(Debate.objects.create(format="single-agent", topic="t")) is None
