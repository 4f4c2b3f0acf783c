"""Comparing protocols ("arms") on the same questions with known answers: accuracy with its interval, every pair of
arms by an exact McNemar test, what each costs per question and per correct answer, the rounds a stop condition
saved, and how the agents' majority moved over the rounds.

Pure (no Django): `compare(runs)` takes plain `Run`s, one per question and arm, and returns a `Report` of frozen
dataclasses; a figure that cannot be computed is a `Figure(None, why)`. docs/experiments.md says what each means.

- Accuracy: the share of runs whose answer was right (a run with no answer counts as wrong, and is counted in
  `unanswered`), with a 95% Wilson score interval (statsmodels' `proportion_confint`, method "wilson"); on request
  also a 95% percentile bootstrap over questions (scipy.stats.bootstrap, numpy's generator seeded), named with its
  resamples and seed in `Share.method`.
- A pair of arms: the questions both ran; `b` those only the first got right, `c` those only the second got right;
  the exact McNemar test's two-sided p-value (statsmodels' `mcnemar(exact=True)`: a binomial test of b of b + c
  at 1/2).
- Spend: calls, tokens, cost and wall time summed over an arm's runs, per question and per correct answer (the total
  over the correct answers; undefined with none). A run whose cost is unknown (a call of unknown price) makes the
  arm's cost undefined, with how many runs are unpriced.
- Rounds saved: for the runs with a cap (an arm whose rounds may stop early), the cap minus the rounds run.
- Agreement: per question with the agents' answers before and after the rounds, the majority is the one answer
  given most often (a tie for the most, or no answer at all, is "split"); it is right or wrong as that answer is.
  Counted: how often a right majority turned wrong and a wrong one right, every transition, the share of questions
  whose majority was right, and the mean share of agents who gave the majority's answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from batches.stats import Figure, plain

CONFIDENCE = 0.95
WILSON = "wilson"
RIGHT, WRONG, SPLIT = "right", "wrong", "split"
SPENDS = ("calls", "tokens", "cost", "wall_s")


@dataclass(frozen=True)
class Answer:
    """One agent's answer to a question: `key` as `question_sets.answer_key` gives it (so equal answers are equal
    keys; None: no answer), and whether it was right."""

    key: str | None
    correct: bool


@dataclass(frozen=True)
class Run:
    """One question run under one arm."""

    question_id: str
    arm: str
    answer: str | None  # the arm's answer, None when it gave none (then `correct` is False)
    correct: bool
    calls: int = 0
    tokens: int = 0
    cost: float | None = 0.0  # None: a call of unknown price
    wall_s: float = 0.0
    rounds_run: int | None = None
    rounds_cap: int | None = None  # the most rounds it could run; None: its rounds do not stop early
    first_answers: tuple[Answer, ...] = ()  # each agent's, before the rounds (an arm of several agents)
    final_answers: tuple[Answer, ...] = ()  # each agent's, after the last round run


@dataclass(frozen=True)
class Share:
    """A share with its 95% interval, and the interval's method; `value` None is undefined (see `why`)."""

    value: float | None
    low: float | None
    high: float | None
    method: str
    why: str = ""


@dataclass(frozen=True)
class Spend:
    """One measure (calls, tokens, cost or wall time) of an arm: its total, per question and per correct answer."""

    total: float | None  # None: undefined (a cost with unpriced runs)
    per_question: Figure
    per_correct: Figure


@dataclass(frozen=True)
class Rounds:
    runs: int  # runs with a cap
    saved: int  # rounds not run, summed over them
    mean_saved: Figure


@dataclass(frozen=True)
class Agreement:
    questions: int  # with the agents' answers both before and after the rounds
    right_to_wrong: int  # a right majority turned wrong
    wrong_to_right: int
    transitions: dict[str, int]  # "right -> split" and every other pair of right, wrong and split, by count
    majority_right_before: Figure
    majority_right_after: Figure
    agreement_before: Figure  # the mean share of agents who gave the majority's answer
    agreement_after: Figure


@dataclass(frozen=True)
class ArmFigures:
    arm: str
    questions: int
    correct: int
    unanswered: int
    accuracy: Share  # Wilson
    bootstrap: Share | None  # when asked for
    calls: Spend
    tokens: Spend
    cost: Spend
    wall_s: Spend
    unpriced: int  # runs whose cost is unknown
    rounds: Rounds | None  # None: no run of it has a cap
    agreement: Agreement | None  # None: no run of it has the agents' answers before and after


@dataclass(frozen=True)
class PairFigures:
    arm_a: str
    arm_b: str
    questions: int  # run under both
    both_right: int
    b: int  # right under arm_a only
    c: int  # right under arm_b only
    both_wrong: int
    difference: Figure  # arm_a's accuracy minus arm_b's on these questions: (b - c) / questions
    p_value: Figure  # the exact McNemar test's, two-sided
    test: str = "exact McNemar"


@dataclass(frozen=True)
class Report:
    arms: list[ArmFigures]
    pairs: list[PairFigures]
    runs: int
    questions: int
    interval: str = WILSON
    bootstrap: str = ""  # the bootstrap's method, when one was asked for

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON: every undefined figure as null with its reason."""
        return plain(self)


# -- accuracy --------------------------------------------------------------------------------------------------------
def wilson(correct: int, total: int) -> Share:
    """The share right with its 95% Wilson score interval."""
    if not total:
        return Share(None, None, None, WILSON, "no question has been run")
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(correct, total, alpha=1 - CONFIDENCE, method="wilson")
    return Share(correct / total, float(low), float(high), WILSON)


def bootstrap_method(resamples: int, seed: int) -> str:
    return f"percentile bootstrap over questions, {resamples} resamples, seed {seed}"


def bootstrapped(correct: Sequence[bool], resamples: int, seed: int = 0) -> Share:
    """The share right with a 95% percentile bootstrap interval, resampling questions (scipy.stats.bootstrap)."""
    method = bootstrap_method(resamples, seed)
    if not correct:
        return Share(None, None, None, method, "no question has been run")
    value = sum(correct) / len(correct)
    if len(correct) < 2:
        return Share(value, None, None, method, "a bootstrap needs two questions or more")
    import numpy as np
    from scipy.stats import bootstrap

    found = bootstrap(
        (np.asarray(correct, dtype=float),),
        np.mean,
        n_resamples=resamples,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return Share(value, float(found.confidence_interval.low), float(found.confidence_interval.high), method)


# -- pairs -----------------------------------------------------------------------------------------------------------
def mcnemar_exact(both_right: int, b: int, c: int, both_wrong: int) -> float:
    """The exact McNemar test's two-sided p-value for the paired table [[both right, b], [c, both wrong]]."""
    from statsmodels.stats.contingency_tables import mcnemar

    return float(mcnemar([[both_right, b], [c, both_wrong]], exact=True).pvalue)


def pair(a: str, b: str, runs_a: dict[str, Run], runs_b: dict[str, Run]) -> PairFigures:
    """Arms `a` and `b` on the questions both ran (runs by question id)."""
    shared = [q for q in runs_a if q in runs_b]
    table = Counter((runs_a[q].correct, runs_b[q].correct) for q in shared)
    both_right, only_a, only_b, both_wrong = (
        table[True, True],
        table[True, False],
        table[False, True],
        table[False, False],
    )
    if not shared:
        why = "no question has been run under both arms"
        return PairFigures(a, b, 0, 0, 0, 0, 0, Figure(None, why), Figure(None, why))
    return PairFigures(
        arm_a=a,
        arm_b=b,
        questions=len(shared),
        both_right=both_right,
        b=only_a,
        c=only_b,
        both_wrong=both_wrong,
        difference=Figure((only_a - only_b) / len(shared)),
        p_value=Figure(mcnemar_exact(both_right, only_a, only_b, both_wrong)),
    )


# -- spend, rounds, agreement ----------------------------------------------------------------------------------------
def spend(total: float | None, questions: int, correct: int, why: str = "") -> Spend:
    """A total per question and per correct answer; `why` says why the total is undefined when it is None."""
    if total is None:
        return Spend(None, Figure(None, why), Figure(None, why))
    if not questions:
        return Spend(total, Figure(None, "no question has been run"), Figure(None, "no question has been run"))
    return Spend(
        total, Figure(total / questions), Figure(total / correct) if correct else Figure(None, "no answer was right")
    )


def rounds_saved(runs: Iterable[Run]) -> Rounds | None:
    capped = [r for r in runs if r.rounds_cap is not None and r.rounds_run is not None]
    if not capped:
        return None
    for run in capped:
        if not 0 <= run.rounds_run <= run.rounds_cap:  # type: ignore[operator]
            raise ValueError(
                f"Question {run.question_id} of {run.arm} ran {run.rounds_run} of {run.rounds_cap} rounds."
            )
    saved = sum(r.rounds_cap - r.rounds_run for r in capped)  # type: ignore[operator]
    return Rounds(len(capped), saved, Figure(saved / len(capped)))


def majority(answers: Sequence[Answer]) -> tuple[str, float]:
    """The majority's state (right, wrong or split) and the share of agents who gave its answer (0 when split)."""
    counts = Counter(a.key for a in answers if a.key is not None)
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return SPLIT, 0.0
    key, count = ranked[0]
    right = next(a.correct for a in answers if a.key == key)
    return (RIGHT if right else WRONG), count / len(answers)


def agreement(runs: Iterable[Run]) -> Agreement | None:
    moved = [
        (majority(r.first_answers), majority(r.final_answers)) for r in runs if r.first_answers and r.final_answers
    ]
    if not moved:
        return None
    transitions = Counter(f"{before} -> {after}" for (before, _), (after, _) in moved)
    total = len(moved)
    return Agreement(
        questions=total,
        right_to_wrong=transitions[f"{RIGHT} -> {WRONG}"],
        wrong_to_right=transitions[f"{WRONG} -> {RIGHT}"],
        transitions={
            f"{x} -> {y}": transitions[f"{x} -> {y}"] for x in (RIGHT, WRONG, SPLIT) for y in (RIGHT, WRONG, SPLIT)
        },
        majority_right_before=Figure(sum(before == RIGHT for (before, _), _ in moved) / total),
        majority_right_after=Figure(sum(after == RIGHT for _, (after, _) in moved) / total),
        agreement_before=Figure(sum(share for (_, share), _ in moved) / total),
        agreement_after=Figure(sum(share for _, (_, share) in moved) / total),
    )


def arm_figures(arm: str, runs: Sequence[Run], *, bootstrap: int = 0, seed: int = 0) -> ArmFigures:
    questions = len(runs)
    correct = sum(r.correct for r in runs)
    unpriced = sum(r.cost is None for r in runs)
    cost_why = f"{unpriced} of its runs made a call of unknown price" if unpriced else ""
    return ArmFigures(
        arm=arm,
        questions=questions,
        correct=correct,
        unanswered=sum(r.answer is None for r in runs),
        accuracy=wilson(correct, questions),
        bootstrap=bootstrapped([r.correct for r in runs], bootstrap, seed) if bootstrap > 0 else None,
        calls=spend(sum(r.calls for r in runs), questions, correct),
        tokens=spend(sum(r.tokens for r in runs), questions, correct),
        cost=spend(None if unpriced else sum(r.cost or 0.0 for r in runs), questions, correct, cost_why),
        wall_s=spend(sum(r.wall_s for r in runs), questions, correct),
        unpriced=unpriced,
        rounds=rounds_saved(runs),
        agreement=agreement(runs),
    )


# -- the report ------------------------------------------------------------------------------------------------------
def compare(runs: Iterable[Run], arms: Sequence[str] = (), *, bootstrap: int = 0, seed: int = 0) -> Report:
    """The whole report over `runs` (one per question and arm, so far: it fills as runs finish). `arms` fixes the
    order of rows and pairs (an arm named with no run yet has an empty row); arms not named follow in the order
    their first run comes. `bootstrap` resamples, when above 0, add a bootstrap interval beside Wilson's."""
    by_arm: dict[str, dict[str, Run]] = {arm: {} for arm in arms}
    count = 0
    for run in runs:
        mine = by_arm.setdefault(run.arm, {})
        if run.question_id in mine:
            raise ValueError(f"Question {run.question_id} has two runs under {run.arm}.")
        mine[run.question_id] = run
        count += 1
    return Report(
        arms=[arm_figures(arm, list(of.values()), bootstrap=bootstrap, seed=seed) for arm, of in by_arm.items()],
        pairs=[pair(a, b, by_arm[a], by_arm[b]) for a, b in combinations(by_arm, 2)],
        runs=count,
        questions=len({q for of in by_arm.values() for q in of}),
        bootstrap=bootstrap_method(bootstrap, seed) if bootstrap > 0 else "",
    )


# -- the chart -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChartPoint:
    arm: str
    x: float  # the measure per question
    accuracy: float
    low: float
    high: float


@dataclass(frozen=True)
class Chart:
    x: str  # the measure on the x axis, per question: "cost", "tokens", "calls" or "wall_s"
    points: list[ChartPoint]
    left_out: dict[str, str]  # an arm with no point, and why

    def as_dict(self) -> dict[str, Any]:
        return plain(self)


def accuracy_against_spend(report: Report, x: str = "cost") -> Chart:
    """Each arm's accuracy (with its Wilson interval) against what it spends per question (`x`, one of SPENDS)."""
    if x not in SPENDS:
        raise ValueError(f"There is no measure {x!r}; the measures are {', '.join(SPENDS)}.")
    points, left_out = [], {}
    for arm in report.arms:
        per = getattr(arm, x).per_question
        share = arm.accuracy
        if share.value is None or share.low is None or share.high is None:
            left_out[arm.arm] = share.why
        elif per.value is None:
            left_out[arm.arm] = per.why
        else:
            points.append(ChartPoint(arm.arm, per.value, share.value, share.low, share.high))
    return Chart(x, points, left_out)
