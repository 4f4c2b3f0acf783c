"""The tournament scheduler and the tournament's shape, as pure functions: no database, no LLM."""

from batches import schedule
from batches.schedule import MATCH, REPLAY, Job, Settings, plan
from tournaments import design


def duel(match, status=None, attempts=0, stalled=False):
    return Job(MATCH, match, match, match, status, attempts if status is None else max(attempts, 1), stalled)


def replay(ident, match, status=None, attempts=0):
    return Job(REPLAY, ident, match, match, status, attempts if status is None else max(attempts, 1))


def ids(jobs):
    return [(j.kind, j.id) for j in jobs]


def test_never_more_than_concurrency_in_flight():
    jobs = [duel(m) for m in range(10)]
    decision = plan(Settings(concurrency=3, active=True), jobs)
    assert ids(decision.create) == [(MATCH, 0), (MATCH, 1), (MATCH, 2)]
    running = [duel(m, "running") for m in range(3)] + [duel(m) for m in range(3, 10)]
    assert plan(Settings(concurrency=3, active=True), running).create == ()
    one_done = [duel(0, "completed"), *running[1:]]
    assert ids(plan(Settings(concurrency=3, active=True), one_done).create) == [(MATCH, 3)]


def test_pending_debates_hold_their_slot_until_they_finish():
    jobs = [duel(0, "pending"), duel(1, "waiting"), duel(2)]
    decision = plan(Settings(concurrency=2, active=True), jobs)
    assert decision.create == () and decision.progress.running == 2


def test_a_failed_debate_is_retried_once_then_counted_failed_without_stopping_the_rest():
    first_failure = [duel(0, "error", attempts=1), duel(1)]
    decision = plan(Settings(concurrency=1, active=True), first_failure)
    assert ids(decision.retry) == [(MATCH, 0)] and decision.create == ()
    second_failure = [duel(0, "error", attempts=2), duel(1)]
    decision = plan(Settings(concurrency=1, active=True), second_failure)
    assert decision.retry == () and ids(decision.create) == [(MATCH, 1)]
    assert decision.progress.failed == 1
    settled = plan(Settings(concurrency=1, active=True), [duel(0, "error", attempts=2), duel(1, "completed")])
    assert settled.settled and settled.progress.done == 1 and settled.progress.failed == 1


def test_replays_wait_for_their_duel_then_go_before_new_duels():
    jobs = [duel(0, "running"), replay(10, 0), replay(11, 0), duel(1), duel(2)]
    decision = plan(Settings(concurrency=3, active=True), jobs)
    assert ids(decision.create) == [(MATCH, 1), (MATCH, 2)]
    jobs = [duel(0, "completed"), replay(10, 0), replay(11, 0), duel(1), duel(2)]
    decision = plan(Settings(concurrency=3, active=True), jobs)
    assert ids(decision.create) == [(REPLAY, 10), (REPLAY, 11), (MATCH, 1)]


def test_replays_of_a_duel_that_failed_for_good_count_as_failed_and_the_tournament_settles():
    failed, finished = duel(0, "error", attempts=2), duel(1, "completed")
    jobs = [failed, replay(10, 0), replay(11, 0), finished, replay(12, 1, "completed")]
    decision = plan(Settings(concurrency=4, active=True), jobs)
    assert decision.create == () and decision.retry == ()
    assert decision.progress == schedule.Progress(total=5, done=2, running=0, failed=3)
    assert decision.settled


def test_interrupted_debates_resume_in_a_free_slot_without_a_new_attempt_and_stalled_ones_restart():
    jobs = [duel(0, "interrupted"), duel(1, "running", stalled=True), duel(2)]
    decision = plan(Settings(concurrency=2, active=True), jobs)
    assert ids(decision.resume) == [(MATCH, 1), (MATCH, 0)]
    assert decision.create == () and decision.retry == ()


def test_a_paused_tournament_starts_nothing_and_settles_when_its_debates_in_flight_land():
    jobs = [duel(0, "running"), duel(1), duel(2, "error", attempts=1)]
    decision = plan(Settings(concurrency=8, active=False), jobs)
    assert decision.create == decision.retry == decision.resume == ()
    assert not decision.settled
    assert plan(Settings(concurrency=8, active=False), [duel(0, "completed"), duel(1)]).settled


def test_the_same_state_gives_the_same_decision():
    jobs = [duel(m, "completed" if m < 3 else None) for m in range(8)] + [replay(100 + m, m) for m in range(8)]
    settings = Settings(concurrency=4, active=True)
    assert plan(settings, jobs) == plan(settings, list(jobs))


def test_leaving_out_the_completed_jobs_changes_no_decision():
    """A pass reads only the open jobs (tournaments/state.py, open_only): over many random states, the plan
    of those alone starts, retries and resumes the same debates, and settles alike."""
    import random

    rng = random.Random(5)
    statuses = [None, None, "pending", "running", "completed", "completed", "error", "interrupted"]
    for _ in range(2000):
        jobs = []
        for match in range(rng.randint(1, 6)):
            jobs.append(duel(match, rng.choice(statuses), rng.randint(0, 2), stalled=rng.random() < 0.1))
            jobs += [replay(100 * match + j, match, rng.choice(statuses), rng.randint(0, 2)) for j in range(2)]
        settings = Settings(concurrency=rng.randint(1, 5), active=rng.random() < 0.8)
        whole = plan(settings, jobs)
        part = plan(settings, [j for j in jobs if j.status != schedule.COMPLETED])
        assert (part.create, part.retry, part.resume, part.settled) == (
            whole.create,
            whole.retry,
            whole.resume,
            whole.settled,
        )


def test_pairings_on_both_sides_and_once():
    both = design.pairings(questions=2, debaters=3, sides="both")
    assert len(both) == 2 * 3 * 2
    for q in range(2):
        ordered = {(p.debater_for, p.debater_against) for p in both if p.question == q}
        assert ordered == {(i, j) for i in range(3) for j in range(3) if i != j}
    once = design.pairings(questions=2, debaters=3, sides="once")
    assert len(once) == 2 * 3
    for q in range(2):
        assert {frozenset((p.debater_for, p.debater_against)) for p in once if p.question == q} == {
            frozenset(s) for s in ((0, 1), (0, 2), (1, 2))
        }
    # Over two questions each pair takes each side once.
    assert {(p.debater_for, p.debater_against) for p in once} == {(i, j) for i in range(3) for j in range(3) if i != j}


def test_the_estimate_counts_duels_replays_and_calls():
    assert design.debate_calls("duel", {"turns": 6}) == 30
    assert design.replay_calls("duel", {"turns": 6}) == 16
    size = design.estimate(questions=5, debaters=3, judges=2, sides="both", repeats=2, options={"turns": 6})
    assert size.matches == 30
    assert size.replays == 30 * 3  # two judges, two repeats each: four verdicts a match, one inside the duel
    assert size.calls == 30 * 30 + 90 * 16
    assert size.sentence() == "30 duels and 90 judge replays: 120 debates, 2340 LLM calls."
    assert design.estimate(questions=1, debaters=2, judges=1, sides="once", repeats=1, options={"turns": 2}).calls == 14
