"""Comparing arms: each statistic against an independent computation on made-up answers (Wilson's interval from its
formula, McNemar's exact p-value as a binomial test and by direct summation, costs by hand), and every undefined
figure with its reason."""

import json
import math
import re
from statistics import NormalDist

import pytest
from scipy.stats import binomtest

from chaoslm.charts import text_width
from comparisons.charts import svg
from comparisons.compare_stats import (
    Answer,
    Run,
    accuracy_against_spend,
    bootstrapped,
    compare,
    mcnemar_exact,
    wilson,
)


def runs_of(arm, right, **each):
    """One run a question (ids q0, q1, ...) under `arm`, right where `right` says so."""
    return [Run(f"q{i}", arm, "x" if ok else "y", ok, **each) for i, ok in enumerate(right)]


def by_hand(k, n):
    """Wilson's score interval from its formula, z the normal's 97.5th percentile."""
    z = NormalDist().inv_cdf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


# -- accuracy --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("k", "n"), [(7, 10), (0, 12), (12, 12), (1, 3), (431, 1000)])
def test_accuracy_and_its_wilson_interval_are_the_formulas(k, n):
    share = wilson(k, n)
    low, high = by_hand(k, n)
    assert share.value == k / n and share.method == "wilson"
    assert share.low == pytest.approx(low, abs=1e-12) and share.high == pytest.approx(high, abs=1e-12)


def test_an_arm_s_accuracy_counts_a_run_without_an_answer_as_wrong_and_apart():
    runs = [*runs_of("solo", [True, True, False]), Run("q3", "solo", None, False)]
    arm = compare(runs).arms[0]
    assert (arm.questions, arm.correct, arm.unanswered) == (4, 2, 1)
    assert (arm.accuracy.low, arm.accuracy.high) == pytest.approx(by_hand(2, 4))


def test_the_bootstrap_over_questions_is_named_seeded_and_its_percentiles_are_the_binomial_s():
    # Nine of ten right: a resample's accuracy is K/10 with K ~ Binomial(10, 0.9); P(K <= 6) = 0.0128 < 0.025 <
    # P(K <= 7) = 0.0702 and P(K = 10) = 0.349 > 0.025, so the 2.5th and 97.5th percentiles are 0.7 and 1.0.
    right = [True] * 9 + [False]
    share = bootstrapped(right, 2000, seed=5)
    assert (share.value, share.low, share.high) == (0.9, 0.7, 1.0)
    assert share.method == "percentile bootstrap over questions, 2000 resamples, seed 5"
    assert bootstrapped(right, 500, seed=1) == bootstrapped(right, 500, seed=1)
    report = compare(runs_of("solo", right), bootstrap=2000, seed=5)
    assert report.arms[0].bootstrap == share and report.bootstrap == share.method
    assert compare(runs_of("solo", right)).arms[0].bootstrap is None


def test_undefined_accuracies_say_why():
    assert wilson(0, 0).value is None and wilson(0, 0).why == "no question has been run"
    one = bootstrapped([True], 100)
    assert (one.value, one.low, one.why) == (1.0, None, "a bootstrap needs two questions or more")


# -- pairs -----------------------------------------------------------------------------------------------------------
# Thirty made-up questions: both right on 15, only the debate on 7, only the vote on 2, neither on 6.
DEBATE = [True] * 15 + [True] * 7 + [False] * 2 + [False] * 6
VOTE = [True] * 15 + [False] * 7 + [True] * 2 + [False] * 6


def test_a_pair_of_arms_has_its_discordant_counts_and_mcnemar_s_exact_p_value():
    pair = compare([*runs_of("debate", DEBATE), *runs_of("vote", VOTE)]).pairs[0]
    assert (pair.arm_a, pair.arm_b, pair.questions) == ("debate", "vote", 30)
    assert (pair.both_right, pair.b, pair.c, pair.both_wrong) == (15, 7, 2, 6)
    assert pair.difference.value == pytest.approx((7 - 2) / 30)
    # A two-sided binomial test of 2 of 9 at one half, and the same summed directly: 2 * (C(9,0)+C(9,1)+C(9,2)) / 2^9.
    assert pair.p_value.value == pytest.approx(binomtest(2, 9, 0.5).pvalue, abs=1e-12)
    assert pair.p_value.value == pytest.approx(2 * (1 + 9 + 36) / 2**9, abs=1e-12)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 3), (10, 0), (1, 12), (40, 25)])
def test_the_exact_mcnemar_p_value_is_a_binomial_test_of_the_discordant_pairs(b, c):
    direct = min(1.0, 2 * sum(math.comb(b + c, k) for k in range(min(b, c) + 1)) / 2 ** (b + c))
    assert mcnemar_exact(5, b, c, 4) == pytest.approx(direct, abs=1e-12)
    if b + c:
        assert mcnemar_exact(5, b, c, 4) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, abs=1e-12)


def test_arms_are_paired_only_on_the_questions_both_ran():
    runs = [*runs_of("debate", [True, False, True]), Run("q0", "vote", "x", False), Run("q9", "vote", "x", True)]
    pair = compare(runs).pairs[0]
    assert (pair.questions, pair.both_right, pair.b, pair.c, pair.both_wrong) == (1, 0, 1, 0, 0)


def test_every_pair_in_the_order_of_the_arms_named_and_an_arm_with_no_run_yet():
    runs = [*runs_of("vote", [True]), *runs_of("solo", [False])]
    report = compare(runs, ["solo", "debate"])
    assert [a.arm for a in report.arms] == ["solo", "debate", "vote"]
    assert [(p.arm_a, p.arm_b) for p in report.pairs] == [("solo", "debate"), ("solo", "vote"), ("debate", "vote")]
    empty = report.arms[1]
    assert (empty.questions, empty.accuracy.value, empty.accuracy.why) == (0, None, "no question has been run")
    assert report.pairs[0].p_value.why == "no question has been run under both arms"
    assert (report.runs, report.questions) == (2, 1)


def test_a_question_run_twice_under_an_arm_is_refused():
    with pytest.raises(ValueError, match=re.escape("Question q0 has two runs under solo.")):
        compare([*runs_of("solo", [True]), *runs_of("solo", [False])])


# -- spend -----------------------------------------------------------------------------------------------------------
def test_calls_tokens_cost_and_wall_time_per_question_and_per_correct_answer():
    runs = [
        Run("q0", "debate", "1", True, calls=9, tokens=1200, cost=0.01, wall_s=4.0),
        Run("q1", "debate", "2", False, calls=9, tokens=1000, cost=0.02, wall_s=6.0),
        Run("q2", "debate", "3", True, calls=6, tokens=800, cost=0.03, wall_s=2.0),
        Run("q3", "debate", None, False, calls=3, tokens=400, cost=0.04, wall_s=8.0),
    ]
    arm = compare(runs).arms[0]
    assert (arm.calls.total, arm.calls.per_question.value, arm.calls.per_correct.value) == (27, 6.75, 13.5)
    assert (arm.tokens.total, arm.tokens.per_question.value, arm.tokens.per_correct.value) == (3400, 850, 1700)
    assert arm.cost.total == pytest.approx(0.10)
    assert arm.cost.per_question.value == pytest.approx(0.10 / 4)
    assert arm.cost.per_correct.value == pytest.approx(0.10 / 2)
    assert (arm.wall_s.total, arm.wall_s.per_question.value, arm.wall_s.per_correct.value) == (20.0, 5.0, 10.0)


def test_cost_per_correct_answer_is_undefined_with_no_correct_answer_and_cost_with_an_unpriced_run():
    none_right = compare(runs_of("solo", [False, False], cost=0.5)).arms[0]
    assert none_right.cost.total == 1.0 and none_right.cost.per_question.value == 0.5
    assert (none_right.cost.per_correct.value, none_right.cost.per_correct.why) == (None, "no answer was right")
    unpriced = compare([*runs_of("solo", [True]), Run("q1", "solo", "x", True, cost=None)]).arms[0]
    assert (unpriced.unpriced, unpriced.cost.total) == (1, None)
    assert unpriced.cost.per_correct.why == "1 of its runs made a call of unknown price"


# -- rounds and agreement --------------------------------------------------------------------------------------------
def test_rounds_saved_by_a_stop_condition_summed_and_averaged():
    runs = [Run(f"q{i}", "mad", "x", True, rounds_run=ran, rounds_cap=3) for i, ran in enumerate([1, 3, 2])]
    rounds = compare([*runs, *runs_of("solo", [True])]).arms[0].rounds
    assert (rounds.runs, rounds.saved, rounds.mean_saved.value) == (3, 3, 1.0)
    assert compare(runs_of("solo", [True])).arms[0].rounds is None
    with pytest.raises(ValueError, match="ran 4 of 3 rounds"):
        compare([Run("q0", "mad", "x", True, rounds_run=4, rounds_cap=3)])


def agents(*keys, right="5"):
    return tuple(Answer(k, k == right) for k in keys)


def test_the_majority_before_and_after_the_rounds_right_turned_wrong_and_wrong_turned_right():
    runs = [
        Run("q1", "du", "6", False, first_answers=agents("5", "5", "6"), final_answers=agents("6", "6", "6")),
        Run("q2", "du", "5", True, first_answers=agents("6", "6", "5"), final_answers=agents("5", "5", "5")),
        Run("q3", "du", "5", True, first_answers=agents("5", "6", None), final_answers=agents("5", "5", "6")),
        Run("q4", "du", "5", True, first_answers=agents("5", "5", "5"), final_answers=agents("5", "5", "5")),
        Run("q5", "du", "5", True),  # no agents' answers: not counted
    ]
    found = compare(runs).arms[0].agreement
    assert (found.questions, found.right_to_wrong, found.wrong_to_right) == (4, 1, 1)
    assert {k: v for k, v in found.transitions.items() if v} == {
        "right -> wrong": 1,
        "wrong -> right": 1,
        "split -> right": 1,
        "right -> right": 1,
    }
    assert len(found.transitions) == 9
    assert (found.majority_right_before.value, found.majority_right_after.value) == (2 / 4, 3 / 4)
    # The share of agents giving the majority's answer: 2/3, 2/3, 0 (a tie) and 1 before; 1, 1, 2/3 and 1 after.
    assert found.agreement_before.value == pytest.approx((2 / 3 + 2 / 3 + 0 + 1) / 4)
    assert found.agreement_after.value == pytest.approx((1 + 1 + 2 / 3 + 1) / 4)
    assert compare(runs_of("solo", [True])).arms[0].agreement is None


# -- the report and its chart ----------------------------------------------------------------------------------------
def test_the_report_is_plain_json_with_every_undefined_figure_and_its_reason():
    report = compare([*runs_of("solo", [False]), *runs_of("vote", [True], cost=None)], bootstrap=100)
    data = json.loads(json.dumps(report.as_dict()))
    solo = data["arms"][0]
    assert solo["cost"]["per_correct"] == {"value": None, "why": "no answer was right"}
    assert solo["accuracy"]["method"] == "wilson" and data["interval"] == "wilson"
    assert data["pairs"][0]["b"] == 0 and data["pairs"][0]["c"] == 1


def test_the_chart_of_accuracy_against_cost_per_question_with_intervals_and_the_arms_left_out():
    report = compare(
        [
            *runs_of("solo", [True, False, True, True], cost=0.001, tokens=100),
            *runs_of("vote", [True, True, True, False], cost=0.005, tokens=500),
            *runs_of("mad", [True, True, False, False], cost=None, tokens=900),
        ],
        ["solo", "vote", "mad", "du"],
    )
    chart = accuracy_against_spend(report)
    assert [(p.arm, p.x, p.accuracy) for p in chart.points] == [("solo", 0.001, 0.75), ("vote", 0.005, 0.75)]
    assert (chart.points[0].low, chart.points[0].high) == pytest.approx(by_hand(3, 4))
    assert chart.left_out == {
        "mad": "4 of its runs made a call of unknown price",
        "du": "no question has been run",
    }
    tokens = accuracy_against_spend(report, "tokens")
    assert [(p.arm, p.x) for p in tokens.points] == [("solo", 100), ("vote", 500), ("mad", 900)]
    with pytest.raises(ValueError, match="There is no measure 'money'"):
        accuracy_against_spend(report, "money")


def test_the_chart_draws_an_arm_s_name_inside_it_the_dearest_to_the_left_of_its_point():
    # Du et al.'s nine calls a question put its point near the right edge: its name, drawn to the right, was cut at
    # the chart's edge ("Du et").
    report = compare(
        [*runs_of("single-agent", [True, False], calls=1), *runs_of("Du et al.", [True, True], calls=9)],
        ["single-agent", "Du et al."],
    )
    drawn = svg(report)
    width = float(re.search(r'viewBox="0 0 (\d+)', drawn).group(1))
    names = re.findall(r'<text x="([\d.]+)" y="[\d.]+"( text-anchor="end")?>([^<]*)</text>', drawn)
    placed = {name: (float(x), bool(end)) for x, end, name in names if name in ("single-agent", "Du et al.")}
    du_x, du_to_the_left = placed["Du et al."]
    assert du_to_the_left and du_x - text_width("Du et al.") >= 0
    single_x, single_to_the_left = placed["single-agent"]
    assert not single_to_the_left and single_x + text_width("single-agent") <= width


def test_the_names_of_arms_of_one_accuracy_at_near_spends_do_not_overlap():
    # Three arms right on 2 of 3 questions at 1, 3 and 6 calls a question: their names, each drawn above its point,
    # ran into each other ("single-agent self-consistenDu et al.", seen on the page at 1280 px).
    arms = [("single-agent", 1), ("self-consistency", 3), ("Du et al.", 6)]
    report = compare(
        [r for arm, calls in arms for r in runs_of(arm, [True, True, False], calls=calls)], [a for a, _ in arms]
    )
    drawn = svg(report)
    width = float(re.search(r'viewBox="0 0 (\d+)', drawn).group(1))
    spans = {}
    for x, y, end, name in re.findall(r'<text x="([\d.]+)" y="([\d.]+)"( text-anchor="end")?>([^<]*)</text>', drawn):
        if name in dict(arms):
            x, y = float(x), float(y)
            spans[name] = (x - text_width(name), x, y) if end else (x, x + text_width(name), y)
    assert sorted(spans) == sorted(dict(arms))  # each whole
    for name, (left, right, _) in spans.items():
        assert left >= 0 and right <= width, name
    names = list(spans)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            (a_left, a_right, a_y), (b_left, b_right, b_y) = spans[a], spans[b]
            assert abs(a_y - b_y) >= 15 or a_right <= b_left or b_right <= a_left, (a, b)
