"""The tournament report's statistics against values computed by hand, and every figure that cannot be computed."""

import json
import math
import random
import warnings

import choix
import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from batches.stats import RIDGE, Figure, Verdict
from tournaments.stats import build_report


def verdict(
    match,
    debater_for,
    debater_against,
    winner,
    *,
    judge="J",
    question=None,
    repeat=0,
    correct=None,
    score_for=None,
    score_against=None,
    contradicts=False,
):
    return Verdict(
        match=match,
        question=match if question is None else question,
        judge=judge,
        repeat=repeat,
        debater_for=debater_for,
        debater_against=debater_against,
        winner=winner,
        correct=correct,
        score_for=score_for,
        score_against=score_against,
        contradicts=contradicts,
    )


# A beat B 3 of 4 times and B beat C 3 of 4 times, each pair on both sides; A and C never met.
# Bradley-Terry on a chain has a closed form: r_A - r_B = r_B - r_C = ln 3, so centred r = (ln 3, 0, -ln 3).
CHAIN = [
    verdict(1, "A", "B", "for", question=0, correct="for"),
    verdict(2, "B", "A", "against", question=0, correct="for"),
    verdict(3, "A", "B", "for", question=1),
    verdict(4, "B", "A", "for", question=1, contradicts=True),
    verdict(5, "B", "C", "for", question=2, correct="against"),
    verdict(6, "C", "B", "against", question=2, correct="against"),
    verdict(7, "B", "C", "for", question=3),
    verdict(8, "C", "B", "for", question=3),
]


def by_name(report):
    return {r.name: r for r in report.ratings}


def test_bradley_terry_on_a_chain_matches_the_closed_form_and_ranks_best_first():
    report = build_report(CHAIN, ["C", "B", "A"], ["J"], bootstrap=200)
    assert [r.name for r in report.ratings] == ["A", "B", "C"]
    ratings = by_name(report)
    assert ratings["A"].rating == pytest.approx(math.log(3), abs=1e-5)
    assert ratings["B"].rating == pytest.approx(0.0, abs=1e-5)
    assert ratings["C"].rating == pytest.approx(-math.log(3), abs=1e-5)
    assert not report.regularized and report.notes == ()
    for r in report.ratings:
        assert r.ci_low <= r.rating <= r.ci_high and r.why == ""


def test_two_debaters_three_to_one_is_ln3_apart():
    report = build_report(CHAIN[:4], ["A", "B"], ["J"], bootstrap=0)
    ratings = by_name(report)
    assert ratings["A"].rating - ratings["B"].rating == pytest.approx(math.log(3), abs=1e-5)
    assert ratings["A"].ci_low is None and "no bootstrap" in ratings["A"].why


def test_win_counts_as_for_and_as_against_and_head_to_head():
    report = build_report(CHAIN, ["A", "B", "C"], ["J"], bootstrap=0)
    a, b, c = (by_name(report)[n] for n in "ABC")
    assert (a.wins, a.losses, a.wins_for, a.losses_for, a.wins_against, a.losses_against) == (3, 1, 2, 0, 1, 1)
    assert (a.win_rate_for, a.win_rate_against) == (Figure(1.0), Figure(0.5))
    assert (b.wins, b.losses, b.wins_for, b.losses_for, b.wins_against, b.losses_against) == (4, 4, 3, 1, 1, 3)
    assert (b.win_rate_for, b.win_rate_against) == (Figure(0.75), Figure(0.25))
    assert (c.wins, c.losses, c.wins_for, c.losses_for, c.wins_against, c.losses_against) == (1, 3, 1, 1, 0, 2)
    assert c.win_rate_against == Figure(0.0)
    assert report.head_to_head == {
        "A": {"A": 0, "B": 3, "C": 0},
        "B": {"A": 1, "B": 0, "C": 3},
        "C": {"A": 0, "B": 1, "C": 0},
    }


def test_judge_figures_for_win_rate_accuracy_and_contradictions():
    (judge,) = build_report(CHAIN, ["A", "B", "C"], ["J"], bootstrap=0).judges
    assert judge.verdicts == 8
    assert judge.for_win_rate == Figure(6 / 8)
    # Known correct sides: match 1 (for: right), 2 (for: wrong), 5 (against: wrong), 6 (against: right).
    assert judge.accuracy == Figure(2 / 4)
    assert judge.contradiction_rate == Figure(1 / 8)
    assert (
        judge.self_consistency.value is None
        and judge.self_consistency.why == "no repeats: J judged each transcript once"
    )


def test_self_consistency_is_the_share_of_agreeing_pairs_of_repeats():
    verdicts = [
        verdict(1, "A", "B", "for", repeat=0),
        verdict(1, "A", "B", "for", repeat=1),
        verdict(1, "A", "B", "against", repeat=2),  # pairs: (for, for) agree, two disagree
        verdict(2, "B", "A", "against", repeat=0),
        verdict(2, "B", "A", "against", repeat=1),  # one pair, agrees
    ]
    (judge,) = build_report(verdicts, ["A", "B"], ["J"], bootstrap=0).judges
    assert judge.self_consistency == Figure(2 / 4)


def panel_verdicts(judges_winners, judges):
    """One match per row; each judge's winner in the row."""
    return [
        verdict(m, "A", "B", w, judge=j)
        for m, row in enumerate(judges_winners, start=1)
        for j, w in zip(judges, row, strict=True)
    ]


def test_cohens_kappa_for_two_judges():
    # J1 x J2: for/for 4, for/against 1, against/for 2, against/against 3.
    rows = [("for", "for")] * 4 + [("for", "against")] + [("against", "for")] * 2 + [("against", "against")] * 3
    panel = build_report(panel_verdicts(rows, ["J1", "J2"]), ["A", "B"], ["J1", "J2"], bootstrap=0).panel
    # p_o = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = 0.2 / 0.5.
    assert panel.method == "cohen"
    assert panel.agreement.value == pytest.approx(0.4)


def test_two_judges_that_always_disagree_have_negative_kappa():
    rows = [("for", "against"), ("against", "for")] * 3
    panel = build_report(panel_verdicts(rows, ["J1", "J2"]), ["A", "B"], ["J1", "J2"], bootstrap=0).panel
    assert panel.agreement.value == pytest.approx(-1.0)


def test_fleiss_kappa_for_three_judges():
    rows = [
        ("for", "for", "for"),
        ("for", "for", "against"),
        ("for", "against", "against"),
        ("against", "against", "against"),
    ]
    panel = build_report(panel_verdicts(rows, ["J1", "J2", "J3"]), ["A", "B"], ["J1", "J2", "J3"], bootstrap=0).panel
    # Per-match agreement 1, 1/3, 1/3, 1 (mean 2/3); p_for = 6/12, so P_e = 0.5; kappa = (2/3 - 1/2) / (1/2).
    assert panel.method == "fleiss"
    assert panel.agreement.value == pytest.approx(1 / 3)


def test_agreement_uses_each_judges_first_judgment_only():
    rows = [("for", "for"), ("against", "against"), ("for", "for")]
    verdicts = [*panel_verdicts(rows, ["J1", "J2"]), verdict(1, "A", "B", "against", judge="J2", repeat=1)]
    panel = build_report(verdicts, ["A", "B"], ["J1", "J2"], bootstrap=0).panel
    assert panel.agreement.value == pytest.approx(1.0)


def test_score_correlation_is_pearsons_r_over_each_debaters_scores():
    verdicts = [
        verdict(1, "A", "B", "for", judge="J1", score_for=8, score_against=6),
        verdict(1, "A", "B", "for", judge="J2", score_for=9, score_against=5),
        verdict(2, "B", "A", "against", judge="J1", score_for=5, score_against=7),
        verdict(2, "B", "A", "against", judge="J2", score_for=4, score_against=8),
    ]
    panel = build_report(verdicts, ["A", "B"], ["J1", "J2"], bootstrap=0).panel
    # J1 (8, 6, 5, 7) and J2 (9, 5, 4, 8): deviations (1.5, -.5, -1.5, .5), (2.5, -1.5, -2.5, 1.5).
    assert panel.score_correlation.value == pytest.approx(9 / math.sqrt(5 * 17))


def test_a_judge_that_always_names_for_with_sides_swapped_ties_everyone():
    debaters = ["A", "B", "C"]
    verdicts = []
    for m, (x, y) in enumerate([(x, y) for x in debaters for y in debaters if x != y], start=1):
        verdicts.append(verdict(m, x, y, "for"))
    report = build_report(verdicts, debaters, ["J"], bootstrap=300)
    assert report.judges[0].for_win_rate == Figure(1.0)
    for r in report.ratings:
        assert r.rating == pytest.approx(0.0, abs=1e-6)
        assert r.ci_low < 0 < r.ci_high
        assert (r.win_rate_for, r.win_rate_against) == (Figure(1.0), Figure(0.0))


def test_an_unbeaten_debater_gets_a_regularized_finite_rating_clear_of_the_others_and_a_note():
    debaters = ["A", "B", "C"]
    pairs = [(x, y) for x in debaters for y in debaters if x != y] * 3
    verdicts = []
    for m, (x, y) in enumerate(pairs, start=1):
        # The judge always favours A; otherwise the FOR side wins.
        winner = "for" if x == "A" else "against" if y == "A" else "for"
        verdicts.append(verdict(m, x, y, winner))
    report = build_report(verdicts, debaters, ["J"], bootstrap=300)
    assert report.regularized
    assert report.notes and report.notes[0].startswith("A never lost") and "regularized" in report.notes[0]
    best, *others = report.ratings
    assert best.name == "A" and math.isfinite(best.rating)
    assert all(best.ci_low > o.ci_high for o in others)
    json.dumps(report.as_dict(), allow_nan=False)


def test_the_fit_agrees_with_choix_on_random_connected_data():
    rng = random.Random(7)
    names = [f"D{i}" for i in range(5)]
    strengths = [rng.uniform(-1, 1) for _ in names]
    verdicts = []
    for m in range(1, 401):
        i, j = rng.sample(range(5), 2)
        p = 1 / (1 + math.exp(strengths[j] - strengths[i]))
        verdicts.append(verdict(m, names[i], names[j], "for" if rng.random() < p else "against"))
    report = build_report(verdicts, names, ["J"], bootstrap=0)
    wins = np.zeros((5, 5))
    for v in verdicts:
        wins[names.index(v.winning_debater), names.index(v.losing_debater)] += 1
    expected = choix.ilsr_pairwise_dense(wins)
    for name, value in zip(names, expected - expected.mean(), strict=True):
        assert by_name(report)[name].rating == pytest.approx(value, abs=1e-4)


def test_bootstrap_is_reproducible_with_a_seed_and_resamples_whole_matches():
    panel = [
        verdict(m, "A", "B", w, judge=j)
        for m, w in enumerate(["for", "for", "against", "for"] * 9)
        for j in ("J1", "J2")
    ]
    first = build_report(panel, ["A", "B"], ["J1", "J2"], bootstrap=200, seed=3)
    again = build_report(panel, ["A", "B"], ["J1", "J2"], bootstrap=200, seed=3)
    assert first == again
    # Both judges always agree, so each replicate counts each match twice: the same point estimate, and
    # intervals as wide as those of one judge (resampling verdicts independently would narrow them).
    alone = build_report([v for v in panel if v.judge == "J1"], ["A", "B"], ["J1"], bootstrap=200, seed=3)
    for x, y in zip(first.ratings, alone.ratings, strict=True):
        assert (x.rating, x.ci_low, x.ci_high) == pytest.approx((y.rating, y.ci_low, y.ci_high), abs=1e-4)


# -- figures that cannot be computed: Figure(None, why), never NaN, never an exception -----------------------------


def assert_plain_json(report):
    text = json.dumps(report.as_dict(), allow_nan=False)
    assert "NaN" not in text


def test_zero_verdicts():
    report = build_report([], ["A", "B"], ["J1", "J2"])
    assert_plain_json(report)
    assert all(
        r.rating is None and r.ci_low is None and r.why == "no verdict has named a winner yet" for r in report.ratings
    )
    assert report.ratings[0].win_rate_for == Figure(None, "no decided verdict as FOR")
    judge = report.judges[0]
    assert judge.verdicts == 0
    assert judge.for_win_rate == Figure(None, "J1 has named no winner yet")
    assert judge.contradiction_rate == Figure(None, "J1 has given no verdict yet")
    assert report.panel.agreement == Figure(None, "fewer than two matches have a winner from every judge")
    assert report.notes == ("No verdict named a winner yet, so there are no ratings.",)


def test_every_judge_always_picks_the_same_side():
    rows = [("for", "for")] * 4
    panel = build_report(panel_verdicts(rows, ["J1", "J2"]), ["A", "B"], ["J1", "J2"], bootstrap=50).panel
    assert panel.agreement.value is None
    assert panel.agreement.why == "every verdict picked FOR, and agreement beyond chance needs winners that vary"


def test_one_question_one_match():
    verdicts = [verdict(1, "A", "B", "for", judge=j, score_for=7, score_against=5) for j in ("J1", "J2")]
    report = build_report(verdicts, ["A", "B"], ["J1", "J2"])
    assert_plain_json(report)
    assert report.panel.agreement.value is None and "fewer than two matches" in report.panel.agreement.why
    assert report.panel.score_correlation.value is None
    assert report.regularized and by_name(report)["A"].rating > by_name(report)["B"].rating


def test_one_judge_has_no_panel_figures():
    report = build_report(CHAIN, ["A", "B", "C"], ["J"], bootstrap=0)
    assert report.panel.method == ""
    assert report.panel.agreement == Figure(None, "one judge: panel figures compare two or more")
    assert report.panel.score_correlation.value is None


def test_no_known_correct_questions():
    verdicts = [verdict(m, "A", "B", "for") for m in (1, 2)]
    (judge,) = build_report(verdicts, ["A", "B"], ["J"], bootstrap=0).judges
    assert judge.accuracy == Figure(None, "J judged no question with a known correct side")


def test_constant_scores_leave_the_correlation_undefined():
    verdicts = [
        verdict(m, "A", "B", w, judge=j, score_for=s, score_against=5)
        for m, w in ((1, "for"), (2, "against"))
        for j, s in (("J1", 5), ("J2", 7 if m == 1 else 3))
    ]
    panel = build_report(verdicts, ["A", "B"], ["J1", "J2"], bootstrap=0).panel
    assert panel.score_correlation == Figure(
        None, "J1 gave every debater the same score, so there is no correlation to compute"
    )


def test_a_debater_with_no_decided_verdict_has_no_rating_and_ranks_last():
    verdicts = [*CHAIN[:4], verdict(9, "C", "A", None)]
    report = build_report(verdicts, ["A", "B", "C"], ["J"], bootstrap=20)
    assert report.ratings[-1].name == "C" and report.ratings[-1].rating is None
    assert report.ratings[-1].why == "no verdict named a winner in a debate of C"
    assert report.judges[0].verdicts == 5 and report.judges[0].for_win_rate == Figure(3 / 4)


def test_unknown_names_are_refused_with_a_message():
    with pytest.raises(ValueError, match="not on the panel"):
        build_report([verdict(1, "A", "B", "for", judge="X")], ["A", "B"], ["J"])
    with pytest.raises(ValueError, match="debater not in the tournament"):
        build_report([verdict(1, "A", "Z", "for")], ["A", "B"], ["J"])


def test_the_ridge_is_what_the_note_says():
    report = build_report([verdict(1, "A", "B", "for")], ["A", "B"], ["J"], bootstrap=0)
    assert f"precision {RIDGE}" in report.notes[0]
    # With one win and the prior: d = r_A - r_B solves 1 - expit(d) = RIDGE * d / 2.
    d = by_name(report)["A"].rating - by_name(report)["B"].rating
    assert 1 - 1 / (1 + math.exp(-d)) == pytest.approx(RIDGE * d / 2, abs=1e-6)


def _runtime_warnings(compute):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compute()
    return result, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def _statsmodels_kappa(rows):
    """Cohen's kappa by statsmodels on the 2x2 table of the two judges' winners (rows: J1, columns: J2)."""
    table = np.zeros((2, 2))
    for first, second in rows:
        table[["for", "against"].index(first), ["for", "against"].index(second)] += 1
    with np.errstate(invalid="ignore"):  # 0 / 0 when both judges pick one side: NaN, said by the test
        return cohens_kappa(table, return_results=False)


def test_a_judge_who_always_picks_one_side_gives_a_kappa_of_zero_whose_interval_is_undefined():
    # J1 says FOR every time, J2 varies: J1's verdicts carry no information, so they agree exactly as often as
    # chance predicts (p_o = p_e = 2/3): kappa is 0, a defined figure. Only its interval fails (variance 0).
    rows = [("for", "for"), ("for", "against"), ("for", "for")]
    report, warned = _runtime_warnings(
        lambda: build_report(panel_verdicts(rows, ["J1", "J2"]), ["A", "B"], ["J1", "J2"], bootstrap=0)
    )
    assert warned == []
    assert report.panel.agreement.value == pytest.approx(_statsmodels_kappa(rows)) == 0.0
    assert report.panel.agreement.why == (
        "no interval: J1 picked FOR every time, so agreement is no better than chance, and with a judge who never "
        "varies kappa's standard error comes out as zero, which says nothing about how sure it is"
    )
    assert report.as_dict()["panel"]["agreement"]["value"] == 0.0


def test_two_judges_each_always_picking_a_different_side_give_a_kappa_of_zero():
    # p_o = 0 and p_e = 1 * 0 + 0 * 1 = 0: kappa = 0 / 1, defined; the interval again is not.
    rows = [("for", "against")] * 3
    panel = build_report(panel_verdicts(rows, ["J1", "J2"]), ["A", "B"], ["J1", "J2"], bootstrap=0).panel
    assert panel.agreement.value == pytest.approx(_statsmodels_kappa(rows)) == 0.0
    assert panel.agreement.why.startswith(
        "no interval: J1 picked FOR and J2 picked AGAINST every time, so agreement is no better"
    )


def test_two_judges_who_agree_on_one_side_every_time_leave_kappa_undefined():
    # p_o = p_e = 1: kappa is 0 / 0, which statsmodels gives as NaN.
    rows = [("against", "against")] * 3
    panel = build_report(panel_verdicts(rows, ["J1", "J2"]), ["A", "B"], ["J1", "J2"], bootstrap=0).panel
    assert panel.agreement.value is None and math.isnan(_statsmodels_kappa(rows))
    assert panel.agreement.why.startswith("every verdict picked AGAINST")


def test_perfect_agreement_of_two_judges_is_one_without_a_warning():
    rows = [("for", "for"), ("against", "against")]
    report, warned = _runtime_warnings(
        lambda: build_report(panel_verdicts(rows, ["J1", "J2"]), ["A", "B"], ["J1", "J2"], bootstrap=0)
    )
    assert warned == [] and report.panel.agreement.value == pytest.approx(1.0)
