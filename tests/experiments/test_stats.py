"""The experiment report's statistics against hand-computed values, and every undefined case with its reason."""

import json
import math

import pytest

from experiments.stats import Judged, accuracy, brier, build_report, difference, flips, reliability

RIGHT, WRONG = (0.9, 0.1), (0.1, 0.9)  # probabilities for answers 0 and 1, with answer 0 correct


def judged(run, question, probabilities, *, protocol="blind", judge="J", swapped=False, correct=0, **extra):
    return Judged(run, question, protocol, judge, swapped, correct, probabilities, **extra)


def ten_questions(protocol, wrong=(9,)):
    return [judged(100 * len(protocol) + q, q, WRONG if q in wrong else RIGHT, protocol=protocol) for q in range(10)]


# -- accuracy ---------------------------------------------------------------------------------------------------------
def test_accuracy_and_its_interval_resampling_questions():
    # Nine of ten questions right. A replicate's accuracy is K/10 with K ~ Binomial(10, 0.9):
    # P(K <= 6) = 0.0128 < 0.025 < P(K <= 7) = 0.0702, and P(K = 10) = 0.349 > 0.025,
    # so the 2.5th and 97.5th percentiles are 0.7 and 1.0.
    estimate = accuracy(ten_questions("blind"))
    assert (estimate.value, estimate.low, estimate.high) == (0.9, 0.7, 1.0)
    assert (estimate.runs, estimate.questions, estimate.why) == (10, 10, "")


def test_a_question_is_resampled_with_all_its_runs_and_a_50_50_answer_scores_half():
    runs = [
        judged(1, 0, RIGHT),
        judged(2, 0, RIGHT, swapped=True),
        judged(3, 1, (0.5, 0.5)),
        judged(4, 1, WRONG, swapped=True),
    ]
    estimate = accuracy(runs, bootstrap=4000)
    # (1 + 1 + 0.5 + 0) / 4. Replicates: both question 0 (1.0, p 1/4), one of each (0.625, p 1/2), both question 1
    # (0.25, p 1/4): the percentiles are the extremes.
    assert (estimate.value, estimate.low, estimate.high) == (0.625, 0.25, 1.0)
    assert estimate.questions == 2


def test_an_unparsed_answer_is_counted_apart_never_guessed():
    runs = [judged(1, 0, RIGHT), judged(2, 1, None), judged(3, 2, WRONG)]
    assert accuracy(runs, bootstrap=0).value == 0.5
    report = build_report(runs, ["blind"], [], ["J"], bootstrap=0)
    assert (report.protocols[0].runs, report.protocols[0].unparsed) == (3, 1)
    assert report.judges[0].unparsed == 1


@pytest.mark.parametrize(
    ("runs", "why"),
    [
        ([], "no run has been judged yet"),
        ([judged(1, 0, RIGHT, correct=None)], "no question judged has a known correct answer"),
        ([judged(1, 0, None)], "every answer with a known correct answer was unparsed"),
    ],
)
def test_accuracy_is_undefined_with_nothing_to_score_and_says_why(runs, why):
    estimate = accuracy(runs)
    assert (estimate.value, estimate.low, estimate.high, estimate.why) == (None, None, None, why)


def test_without_bootstrap_replicates_there_is_no_interval_and_the_reason_is_given():
    estimate = accuracy(ten_questions("blind"), bootstrap=0)
    assert (estimate.value, estimate.low, estimate.high) == (0.9, None, None)
    assert estimate.why == "no bootstrap replicates were asked for, so there is no interval"


# -- differences ----------------------------------------------------------------------------------------------------
def test_the_difference_between_protocols_resamples_the_same_questions_for_both():
    debate = ten_questions("evidence_debate", wrong=())
    blind = ten_questions("blind")
    estimate = difference(debate, blind)
    # Paired: a replicate's difference is 1 - K/10, K ~ Binomial(10, 0.9), so the interval is [1 - 1.0, 1 - 0.7].
    assert estimate.value == pytest.approx(0.1)
    assert (estimate.low, estimate.high) == (pytest.approx(0.0), pytest.approx(0.3))


def test_a_difference_is_undefined_without_common_questions():
    debate = [judged(1, 0, RIGHT, protocol="evidence_debate")]
    blind = [judged(2, 1, RIGHT)]
    assert difference(debate, blind).why == "no question was judged under both protocols"
    assert difference(debate, []).why == "no run has been judged yet"


# -- calibration ----------------------------------------------------------------------------------------------------
def test_the_brier_score_is_the_mean_squared_miss_on_the_correct_answer():
    runs = [judged(1, 0, (0.8, 0.2)), judged(2, 1, (0.4, 0.6), correct=1), judged(3, 2, (0.3, 0.7))]
    # (1 - 0.8)^2 + (1 - 0.6)^2 + (1 - 0.3)^2 = 0.04 + 0.16 + 0.49, over 3.
    assert brier(runs).value == pytest.approx(0.23)
    assert brier([judged(1, 0, (0.5, 0.5))]).value == 0.25
    assert brier([judged(1, 0, None)]).why == "every answer with a known correct answer was unparsed"


def test_the_reliability_bins_the_probability_given_to_the_answer_shown_first():
    runs = [
        judged(1, 0, (0.05, 0.95)),  # A (answer 0) is correct, given 0.05
        judged(2, 1, (0.15, 0.85), correct=1),  # A wrong, given 0.15
        judged(3, 2, (0.95, 0.05)),  # A right, 0.95
        judged(4, 3, (0.0, 1.0), swapped=True, correct=1),  # shown first is answer 1, given 1.0: right
        judged(5, 4, (0.92, 0.08), correct=1),  # A wrong, 0.92
        judged(6, 5, None),  # unparsed: in no bin
        judged(7, 6, RIGHT, correct=None),  # no correct answer: in no bin
    ]
    bins = reliability(runs)
    assert [(b.low, b.high, b.count) for b in bins] == [
        (i / 10, (i + 1) / 10, c) for i, c in enumerate([1, 1] + [0] * 7 + [3])
    ]
    assert (bins[0].forecast, bins[0].observed) == (0.05, 1.0)
    assert (bins[1].forecast, bins[1].observed) == (0.15, 0.0)
    assert bins[9].forecast == pytest.approx((0.95 + 1.0 + 0.92) / 3)
    assert bins[9].observed == pytest.approx(2 / 3)
    assert (bins[5].forecast, bins[5].observed) == (None, None)


# -- position bias -----------------------------------------------------------------------------------------------------
def pair(question, plain, swapped, judge="J"):
    return [
        judged(2 * question, question, plain, judge=judge),
        judged(2 * question + 1, question, swapped, judge=judge, swapped=True),
    ]


def test_a_judge_who_always_picks_the_first_answer_shown_flips_every_time():
    # Shown first: answer 0 in the plain run, answer 1 in the swapped one.
    runs = pair(0, (1.0, 0.0), (0.0, 1.0)) + pair(1, (0.7, 0.3), (0.2, 0.8))
    figure, pairs = flips(runs)
    assert (figure.value, pairs) == (1.0, 2)


def test_the_flip_rate_counts_pairs_whose_choices_differ_as_answers():
    runs = pair(0, RIGHT, RIGHT) + pair(1, WRONG, WRONG) + pair(2, RIGHT, WRONG)
    figure, pairs = flips(runs)
    assert (figure.value, pairs) == (pytest.approx(1 / 3), 3)


def test_the_flip_rate_is_undefined_without_complete_pairs_and_says_why():
    assert flips([judged(1, 0, RIGHT)])[0].why == "no run has both answer orders judged yet"
    figure, pairs = flips(pair(0, RIGHT, None) + pair(1, (0.5, 0.5), RIGHT))
    assert (figure.value, pairs) == (None, 0)
    assert figure.why == "no pair of runs in both orders has a choice in both (unparsed or 50-50 answers)"


# -- debaters ----------------------------------------------------------------------------------------------------------
def debate(run, question, probabilities, first, second, *, swapped=False, correct=0, quotes=None):
    return judged(
        run,
        question,
        probabilities,
        protocol="evidence_debate",
        swapped=swapped,
        correct=correct,
        first=first,
        second=second,
        quotes=quotes or {},
    )


def test_persuasiveness_and_the_bradley_terry_rating_as_in_tournaments():
    # Ada beats Bob in three of four debates: the maximum-likelihood ratings differ by log 3, centred on 0.
    runs = [
        debate(1, 0, RIGHT, "Ada", "Bob"),  # Ada argues the correct answer 0 and wins
        debate(2, 1, RIGHT, "Ada", "Bob", swapped=True),  # again, shown second
        debate(3, 2, WRONG, "Bob", "Ada"),  # Ada argues the incorrect answer 1 and wins
        debate(4, 3, WRONG, "Ada", "Bob"),  # Ada argues the correct answer and loses
        debate(5, 4, (0.5, 0.5), "Ada", "Bob"),  # no choice: counts for no one
    ]
    report = build_report(runs, ["evidence_debate"], ["Ada", "Bob"], ["J"], bootstrap=0)
    ada, bob = report.debaters
    assert ada.win_rate_correct.value == pytest.approx(2 / 3)
    assert ada.win_rate_incorrect.value == 1.0
    assert bob.win_rate_correct.value == 0.0
    assert bob.win_rate_incorrect.value == pytest.approx(1 / 3)
    assert ada.rating == pytest.approx(math.log(3) / 2, abs=1e-4)
    assert bob.rating == pytest.approx(-math.log(3) / 2, abs=1e-4)
    assert ada.consultant_win_rate_correct.why == "no consultancy arguing the correct answer with a decided verdict"


def test_quote_verification_rates_per_debater():
    runs = [
        debate(1, 0, RIGHT, "Ada", "Bob", quotes={"Ada": {"quotes": 3, "verified": 3, "unverified": 0},
                                                  "Bob": {"quotes": 2, "verified": 0, "unverified": 2}}),
        debate(2, 1, RIGHT, "Ada", "Bob", quotes={"Ada": {"quotes": 1, "verified": 0, "unverified": 1}}),
    ]  # fmt: skip
    report = build_report(runs, ["evidence_debate"], ["Ada", "Bob", "Cy"], ["J"], bootstrap=0)
    ada, bob, cy = report.debaters
    assert (ada.quotes, ada.verified, ada.unverified, ada.verified_rate.value) == (4, 3, 1, 0.75)
    assert (bob.quotes, bob.verified_rate.value) == (2, 0.0)
    assert cy.verified_rate.why == "no quote made"
    assert cy.rating is None and cy.rating_why


def test_how_often_a_judge_questions_the_consultant_when_it_may():
    runs = [
        judged(1, 0, RIGHT, protocol="consultancy", first="Ada", assigned=0, asked=(2, 2)),
        judged(2, 0, RIGHT, protocol="consultancy", first="Ada", assigned=0, asked=(0, 2), swapped=True),
        judged(3, 1, WRONG, protocol="consultancy", first="Ada", assigned=1, asked=(1, 2), judge="K"),
        judged(4, 1, RIGHT, protocol="blind", judge="L"),
    ]
    judges = {j.name: j for j in build_report(runs, ["consultancy", "blind"], ["Ada"], ["J", "K", "L"]).judges}
    assert judges["J"].asked.value == 0.5  # 2 of its 4 chances
    assert judges["K"].asked.value == 0.5
    assert judges["L"].asked.why == "no consultancy of more than one round judged"


def test_the_report_as_json_names_every_undefined_figure():
    report = build_report([], ["evidence_debate", "consultancy", "blind"], ["Ada"], ["J"])
    data = json.loads(json.dumps(report.as_dict()))
    assert data["protocols"][0]["accuracy"] == {
        "value": None,
        "low": None,
        "high": None,
        "runs": 0,
        "questions": 0,
        "why": "no run has been judged yet",
    }
    assert data["protocols"][0]["brier"] == {"value": None, "why": "no run has been judged yet"}
    assert set(data["differences"]) == {"evidence_debate - consultancy", "evidence_debate - blind"}
    assert data["judges"][0]["flip_rate"] == {"value": None, "why": "no run has both answer orders judged yet"}
    assert data["debaters"][0]["win_rate_correct"]["why"] == (
        "no debate arguing the correct answer with a decided verdict"
    )


def test_human_accuracy_beside_each_judges_on_the_same_debates():
    from experiments.stats import HumanVote, human_accuracy

    votes = [
        HumanVote(run=1, voter="a", right=True),
        HumanVote(run=1, voter="b", right=False),
        HumanVote(run=2, voter="a", right=True),
        HumanVote(run=2, voter="c", right=True),
        HumanVote(run=3, voter="d", right=False, excluded=True),  # kept, not counted: run 3 is no voted debate
    ]
    runs = [
        judged(1, 0, (0.9, 0.1), protocol="evidence_debate", judge="J"),  # right
        judged(2, 1, (0.5, 0.5), protocol="evidence_debate", judge="J"),  # 50-50: half
        judged(3, 2, (0.9, 0.1), protocol="evidence_debate", judge="J"),  # a debate nobody's counted vote is on
        judged(4, 0, (0.2, 0.8), protocol="evidence_debate", judge="K", source=1),  # K rereads run 1: wrong
        judged(5, 0, (0.9, 0.1), protocol="blind", judge="K"),  # no debate
    ]
    found = human_accuracy(votes, runs, ["J", "K", "L"])
    assert (found.votes, found.voters, found.debates, found.excluded) == (4, 3, 2, 1)
    # Wilson's 95% interval for 3 of 4, by its formula.
    z, n, p = 1.959963984540054, 4, 0.75
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    assert found.accuracy.value.value == 0.75
    assert (found.accuracy.low, found.accuracy.high) == (pytest.approx(centre - half), pytest.approx(centre + half))
    j, k, never = found.judges
    assert (j.name, j.runs, j.debates, j.accuracy.value.value) == ("J", 2, 2, 0.75)
    assert (k.name, k.runs, k.debates, k.accuracy.value.value) == ("K", 1, 1, 0.0)
    assert (
        never.accuracy.value.value is None
        and never.accuracy.value.why == "L has no parsed answer on a debate people voted on"
    )
    assert human_accuracy([], runs, ["J"]).accuracy.value.why == "no vote is counted yet"
