"""The Oxford poll's arithmetic (audience/polls.py) against values worked out by hand."""

import pytest

from audience.polls import UNDECIDED, agrees, plurality, result

# Ten people vote before, twelve after; nine of them both times (v8 left, v11 to v13 came late).
BEFORE = {
    "v1": "a", "v2": "a", "v3": "a",
    "v4": "b", "v5": "b", "v6": "b", "v7": "b", "v8": "b",
    "v9": UNDECIDED, "v10": UNDECIDED,
}  # fmt: skip
AFTER = {
    "v1": "a", "v2": "a", "v3": "b",
    "v4": "a", "v5": "a", "v6": "b", "v7": "b",
    "v9": "a", "v10": UNDECIDED,
    "v11": "a", "v12": "a", "v13": "b",
}  # fmt: skip


def test_shares_swing_and_winner_by_the_larger_gain():
    r = result(("a", "b"), BEFORE, AFTER)
    assert r.before == {"a": 3, "b": 5, UNDECIDED: 2}
    assert r.after == {"a": 7, "b": 4, UNDECIDED: 1}
    # Before: 3/10, 5/10, 2/10. After: 7/12, 4/12, 1/12.
    assert r.before_share == {"a": 30.0, "b": 50.0, UNDECIDED: 20.0}
    assert r.after_share == pytest.approx({"a": 58.3333, "b": 33.3333, UNDECIDED: 8.3333}, abs=1e-3)
    assert r.swing == pytest.approx({"a": 28.3333, "b": -16.6667}, abs=1e-3)
    assert r.winner == "a"


def test_the_paired_table_counts_only_those_who_voted_twice():
    r = result(("a", "b"), BEFORE, AFTER)
    assert r.paired_voters == 9
    assert r.paired == {
        "a": {"a": 2, "b": 1, UNDECIDED: 0},
        "b": {"a": 2, "b": 2, UNDECIDED: 0},
        UNDECIDED: {"a": 1, "b": 0, UNDECIDED: 1},
    }
    assert r.changed == 4  # v3 a->b, v4 and v5 b->a, v9 undecided->a


def test_the_side_that_loses_less_wins_when_both_lose():
    # Before 4/4/2 of 10 (40, 40, 20); after 7/6/7 of 20 (35, 30, 35): a -5, b -10.
    before = {f"p{i}": c for i, c in enumerate("aaaabbbbuu")}
    after = {f"q{i}": c for i, c in enumerate("aaaaaaabbbbbbuuuuuuu")}
    before = {k: (UNDECIDED if v == "u" else v) for k, v in before.items()}
    after = {k: (UNDECIDED if v == "u" else v) for k, v in after.items()}
    r = result(("a", "b"), before, after)
    assert r.swing == pytest.approx({"a": -5.0, "b": -10.0})
    assert r.winner == "a"
    assert r.paired_voters == 0 and r.changed == 0


def test_equal_gains_or_an_empty_phase_name_no_winner():
    tie = result(("a", "b"), {"x": "a", "y": "b"}, {"x": "a", "y": "b"})
    assert tie.swing == {"a": 0.0, "b": 0.0} and tie.winner is None
    nobody_after = result(("a", "b"), {"x": "a"}, {})
    assert nobody_after.after_share == {"a": 0.0, "b": 0.0, UNDECIDED: 0.0}
    assert nobody_after.winner is None


def test_votes_for_options_that_do_not_exist_are_not_counted():
    r = result(("a", "b"), {"x": "a", "y": "judge"}, {"x": "b", "y": "b"})
    assert r.before == {"a": 1, "b": 0, UNDECIDED: 0}
    assert r.paired_voters == 1


def test_agreement_with_the_judge():
    assert agrees("a", "a") is True
    assert agrees("a", "b") is False
    assert agrees(None, "a") is None and agrees("a", None) is None


def test_the_peoples_choice_is_the_most_votes_and_a_tie_names_nobody():
    assert plurality({"p1": 1, "p2": 2, "p3": 0}, ("p1", "p2", "p3")) == "p2"
    assert plurality({"p1": 2, "p2": 2}, ("p1", "p2")) is None
    assert plurality({}, ("p1", "p2")) is None
