"""A tournament report's human figures (tournaments/human.py) from arena votes: Bradley-Terry against choix, kappa
against statsmodels, the Wilson interval by hand, the majority and what the figures rest on."""

from __future__ import annotations

import math
import random

import choix
import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from batches.stats import Verdict
from tournaments.human import Vote, build, majority


def vote(match, voter, choice, a="A", b="B", excluded=False):
    return Vote(match=match, voter=voter, choice=choice, debater_for=a, debater_against=b, excluded=excluded)


def verdict(match, winner, judge="J", a="A", b="B", repeat=0):
    return Verdict(
        match=match,
        question=0,
        judge=judge,
        repeat=repeat,
        debater_for=a,
        debater_against=b,
        winner=winner,
        correct=None,
    )


def test_human_ratings_match_choix_on_the_same_votes():
    rng = random.Random(11)
    names = [f"D{i}" for i in range(4)]
    strengths = [1.0, 0.3, -0.2, -1.1]
    votes = []
    for m in range(1, 121):
        i, j = rng.sample(range(4), 2)
        for k in range(rng.randint(1, 3)):
            p = 1 / (1 + math.exp(strengths[j] - strengths[i]))
            votes.append(vote(m, f"v{m}-{k}", "for" if rng.random() < p else "against", names[i], names[j]))
    # Ties and excluded votes count for no one: adding them leaves the ratings as they are.
    noise = [vote(1, "tied", "tie", names[0], names[1]), vote(2, "hidden", "for", names[3], names[0], excluded=True)]
    report = build(votes + noise, [], names, [], bootstrap=0)
    wins = np.zeros((4, 4))
    for v in votes:
        winner, loser = (v.debater_for, v.debater_against) if v.choice == "for" else (v.debater_against, v.debater_for)
        wins[names.index(winner), names.index(loser)] += 1
    expected = choix.ilsr_pairwise_dense(wins)
    got = {r.name: r.rating for r in report.ratings}
    for name, value in zip(names, expected - expected.mean(), strict=True):
        assert got[name] == pytest.approx(value, abs=1e-4)
    assert [r.name for r in report.ratings] == names  # in order of strength, as drawn
    assert report.votes == len(votes) + 1 and report.excluded == 1


def test_human_intervals_come_from_the_bootstrap_and_hold_the_rating():
    votes = [vote(m, f"v{m}", "for" if m % 3 else "against") for m in range(30)]
    report = build(votes, [], ["A", "B"], [], bootstrap=200, seed=1)
    for r in report.ratings:
        assert r.ci_low < r.rating < r.ci_high
    assert build(votes, [], ["A", "B"], [], bootstrap=200, seed=1) == report


def test_majority_is_the_most_votes_and_none_on_equal_counts():
    from collections import Counter

    assert majority(Counter({"for": 2, "against": 1})) == "for"
    assert majority(Counter({"for": 1, "tie": 2})) == "tie"
    assert majority(Counter({"for": 2, "against": 2, "tie": 1})) is None
    assert majority(Counter()) is None


def test_each_judge_against_the_human_majority_agreement_and_kappa_against_statsmodels():
    # Ten matches; the humans' majority and two judges' winners (repeat 0; a repeat 1 must be ignored).
    humans = ["for", "for", "against", "for", "against", "against", "for", "for", "against", "for"]
    judge_1 = ["for", "against", "against", "for", "against", "for", "for", "for", "against", "for"]
    judge_2 = ["against"] * 10
    votes = []
    for m, side in enumerate(humans):
        other = "against" if side == "for" else "for"
        votes += [vote(m, f"x{m}", side), vote(m, f"y{m}", side), vote(m, f"z{m}", other)]
    votes += [vote(10, "p", "for"), vote(10, "q", "against")]  # no majority: left out of the comparison
    votes += [vote(11, "p", "tie"), vote(11, "q", "tie")]  # a tie's majority names no side: left out too
    verdicts = [verdict(m, w, "J1") for m, w in enumerate(judge_1)] + [
        verdict(m, w, "J2") for m, w in enumerate(judge_2)
    ]
    verdicts += [verdict(m, "against", "J1", repeat=1) for m in range(10)]
    verdicts += [verdict(10, "for", "J1"), verdict(11, "for", "J1")]
    report = build(votes, verdicts, ["A", "B"], ["J1", "J2"], bootstrap=0)

    j1, j2 = report.judges
    assert (j1.matches, j1.agreed) == (10, 8)
    table = np.zeros((2, 2))
    for h, j in zip(humans, judge_1, strict=True):
        table[("for", "against").index(h), ("for", "against").index(j)] += 1
    expected = cohens_kappa(table)
    assert j1.kappa.value.value == pytest.approx(expected.kappa)
    assert (j1.kappa.low, j1.kappa.high) == (pytest.approx(expected.kappa_low), pytest.approx(expected.kappa_upp))
    # Wilson's interval for 8 of 10, by hand.
    z, n, p = 1.959963984540054, 10, 0.8
    centre, half = (
        (p + z * z / (2 * n)) / (1 + z * z / n),
        z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n),
    )
    assert j1.agreement.value.value == 0.8
    assert (j1.agreement.low, j1.agreement.high) == (pytest.approx(centre - half), pytest.approx(centre + half))
    # A judge who always picks AGAINST: kappa is 0 (no better than chance), with no interval, and said why.
    assert (j2.matches, j2.agreed) == (10, 4)
    assert j2.kappa.value.value == pytest.approx(0.0)
    assert j2.kappa.low is None
    assert j2.kappa.value.why == (
        "no interval: J2 picked the same side every time, so kappa's standard error comes out as zero"
    )

    assert (report.votes, report.voters, report.matches, report.excluded) == (34, 32, 12, 0)
    row = report.per_match[10]
    assert row.votes == {"for": 1, "against": 1, "tie": 0} and row.majority is None
    assert report.per_match[0].judges == {"J1": "for", "J2": "against"}


def test_no_votes_say_so_and_every_figure_is_undefined():
    report = build([vote(1, "v", "for", excluded=True)], [verdict(1, "for")], ["A", "B"], ["J"], bootstrap=10)
    assert (report.votes, report.voters, report.matches, report.excluded) == (0, 0, 0, 1)
    assert report.notes == ("No vote is counted yet: the figures fill in as people vote in the arena.",)
    assert all(r.rating is None for r in report.ratings)
    (j,) = report.judges
    assert j.agreement.value.value is None and j.kappa.value.value is None
    assert "fewer than two matches" in j.kappa.value.why
