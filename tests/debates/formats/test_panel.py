"""The panel (panel-rounds.md): round utilities on the spec's examples and edges, rounds, resolution."""

from dataclasses import replace

import pytest

from debates.formats import DebateConfig, FormatError, Record, SeatInfo, get_format
from debates.formats.panel import (
    DiscussionRound,
    calculate_turn_number,
    filter_complete_rounds,
    is_round_complete,
    is_round_empty,
    is_round_incomplete,
    moderator_status,
    rounds_from_records,
    sort_rounds_by_round_number,
    validate_new_round_number,
    validate_round_number_sequence,
    validate_rounds_sorted,
)
from tests.simulate import run

R = DiscussionRound
COMPLETE = R(1, "a", "s", "m")
EMPTY = R(2)
INCOMPLETE = R(3, "a", "s")


@pytest.mark.parametrize(
    ("round_", "complete", "empty", "incomplete"),
    [
        (COMPLETE, True, False, False),
        (EMPTY, False, True, False),
        (INCOMPLETE, False, False, True),
        (R(1, "a"), False, False, True),
        (R(1, None, None, "m"), False, False, True),
        (R(1, "  ", "\n", ""), False, True, False),  # whitespace is no content
        (R(1, "a", " ", "m"), False, False, True),
    ],
)
def test_round_states(round_, complete, empty, incomplete):
    assert (is_round_complete(round_), is_round_empty(round_), is_round_incomplete(round_)) == (
        complete,
        empty,
        incomplete,
    )


def test_filter_complete_rounds_keeps_complete_and_empty_rounds_only():
    assert filter_complete_rounds([COMPLETE, EMPTY, INCOMPLETE]) == [COMPLETE, EMPTY]
    assert filter_complete_rounds([]) == []


def test_sorting_and_sorted_validation():
    rounds = [R(3), R(1), R(2)]
    assert [r.round_number for r in sort_rounds_by_round_number(rounds)] == [1, 2, 3]
    assert not validate_rounds_sorted(rounds)
    assert validate_rounds_sorted(sort_rounds_by_round_number(rounds))
    assert validate_rounds_sorted([])


@pytest.mark.parametrize(
    ("numbers", "errors"),
    [
        ([1, 2, 3], []),
        ([], []),
        ([1, 3], ["Gap in round numbers between 1 and 3"]),
        ([1, 2, 2], ["Duplicate round number 2"]),
        ([2, 3], ["Round numbers must start at 1, not 2"]),
        ([0, 1], ["Round number 0 is not a positive integer"]),
        ([1, -1], ["Round number -1 is not a positive integer"]),
        ([1, 1.5], ["Round number 1.5 is not a positive integer"]),
    ],
)
def test_round_number_sequence_validation(numbers, errors):
    assert validate_round_number_sequence([R(n) for n in numbers]) == (not errors, errors)


def test_new_round_number_must_be_the_next_one():
    assert validate_new_round_number([R(1), R(2)], 3) == (True, None)
    assert validate_new_round_number([], 1) == (True, None)
    assert validate_new_round_number([R(1)], 3) == (False, "Expected round number 2, got 3")
    assert validate_new_round_number([R(1)], 1) == (False, "Expected round number 2, got 1")


@pytest.mark.parametrize(
    ("round_number", "persona", "turn"),
    [
        (1, "Analyzer AI", 1),
        (1, "Solver AI", 2),
        (1, "Moderator AI", 3),
        (2, "Analyzer AI", 4),
        (10, "Moderator AI", 30),
    ],
)
def test_calculate_turn_number_on_the_specs_examples(round_number, persona, turn):
    assert calculate_turn_number(round_number, persona) == turn


def test_calculate_turn_number_refuses_round_zero():
    with pytest.raises(ValueError, match="at least 1"):
        calculate_turn_number(0, "Analyzer AI")


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("All done.\nSTATUS: RESOLVED", "resolved"),
        ("All done.\n**status: resolved**\n\n", "resolved"),
        ("Done.\n`STATUS: RESOLVED`.", "resolved"),
        ("Not yet.\nSTATUS: CONTINUE", "continue"),
        ("The problem is resolved, I think.", "continue"),  # prose never ends the panel
        ("STATUS: RESOLVED\nBut let us keep going.", "continue"),  # only the last line counts
        ("", "continue"),
    ],
)
def test_moderator_status_line(text, status):
    assert moderator_status(text) == status


ANALYZER = SeatInfo("analyzer", "analyzer", "Analyzer AI", system_prompt="analyze")
SOLVER = SeatInfo("solver", "solver", "Solver AI", system_prompt="solve")
MODERATOR = SeatInfo("moderator", "moderator", "Moderator AI", system_prompt="moderate")


def panel(**options):
    return DebateConfig(
        format="panel",
        topic="Halve traffic deaths",
        options={"max_rounds": 3, **options},
        seats=(ANALYZER, SOLVER, MODERATOR),
    )


def test_rounds_of_three_in_order_with_turn_numbers_as_ordinals():
    calls, _records, plan = run(panel())
    assert plan.finished
    assert [c.seat for c in calls] == ["analyzer", "solver", "moderator"] * 3
    assert [c.ordinal for c in calls] == list(range(1, 10))
    assert all(
        c.ordinal
        == calculate_turn_number(
            c.data["round"], {"analyzer": "Analyzer AI", "solver": "Solver AI", "moderator": "Moderator AI"}[c.seat]
        )
        for c in calls
    )
    assert "Round 3 of at most 3" in calls[-1].prompt


def test_the_analyzer_sees_complete_rounds_and_the_others_see_the_round_in_progress():
    calls, _records, _ = run(panel())
    analyzer_2, solver_2, moderator_2 = calls[3], calls[4], calls[5]
    for text in ("<analyzer analyzer 1>", "<solver solver 2>", "<moderator moderator 3>"):
        assert text in analyzer_2.prompt
    assert "<analyzer analyzer 4>" in solver_2.prompt and "<solver solver 5>" not in solver_2.prompt
    assert "<solver solver 5>" in moderator_2.prompt
    assert calls[0].prompt.startswith("Problem: Halve traffic deaths\n\nRound 1.")


def test_the_analyzer_never_sees_an_incomplete_round():
    # A transcript where round 2 lost its moderator turn (say, restored from an old export).
    records = [Record(0, "HEADER")]
    contents = {1: "A1", 2: "S1", 3: "M1", 4: "A2", 5: "S2-secret"}
    seats = {1: "analyzer", 2: "solver", 3: "moderator", 4: "analyzer", 5: "solver"}
    records += [Record(o, "TURN", seats[o], content=c) for o, c in contents.items()]
    plan = get_format("panel").next_steps(panel(), records)
    (step,) = plan.steps
    assert step.seat == "moderator"  # the round is finished first, never skipped
    # Were the analyzer to start round 3 now, the incomplete round 2 would be filtered out.
    rounds = rounds_from_records(records)
    assert [r.round_number for r in filter_complete_rounds(rounds)] == [1]


def test_a_resolved_status_ends_the_panel_early():
    def reply(step):
        return "Settled.\nSTATUS: RESOLVED" if step.seat == "moderator" and step.data["round"] == 2 else None

    calls, _records, plan = run(panel(max_rounds=5), reply=reply)
    assert plan.finished and len(calls) == 6


def test_end_debate_finishes_the_round_in_progress_then_stops():
    _, records, _ = run(panel(), until=lambda rs: len(rs) == 6)  # header + 5 turns: round 2 half done
    calls, records, plan = run(replace(panel(), is_ending=True), records)
    assert [c.seat for c in calls] == ["moderator"] and plan.finished
    _, records, _ = run(panel(), until=lambda rs: len(rs) == 4)  # round 1 complete
    calls, _, plan = run(replace(panel(), is_ending=True), records)
    assert calls == [] and plan.finished


def test_a_gap_in_the_rounds_is_refused_with_a_message():
    records = [
        Record(0, "HEADER"),
        Record(1, "TURN", "analyzer", content="x"),
        Record(7, "TURN", "analyzer", content="y"),
    ]
    with pytest.raises(FormatError, match="Gap in round numbers between 1 and 3"):
        get_format("panel").next_steps(panel(), records)


def test_its_sides_judging_and_poll():
    # What it chose; tests/debates/formats/test_interface.py checks they agree with each other.
    fmt = get_format("panel")
    assert (fmt.sides, fmt.judging, fmt.judge_seat, fmt.poll) == ((), "none", None, "people")
