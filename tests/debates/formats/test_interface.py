"""What every format tells the rest of the code about itself (debates/formats/base.py): its sides, which seat speaks
for and against a motion, how it is judged and its poll, checked by rules every registered format (and every shipped
card) keeps (`assert_hooks_agree`; each format's own test pins the values it chose); its step titles; and its counts
of public statements and LLM calls, each count checked against a run of the format itself (tests/simulate.py)."""

import json
from pathlib import Path

import pytest

from debates.formats import DEFAULT_FORMAT, FORMATS, LISTED, DebateConfig, SeatInfo, Side, get_format
from debates.formats.base import JUDGING
from tests.simulate import run

PASSAGE = "The river froze in 1893. The mill closed a year later."
EVIDENCE = {"passage": PASSAGE, "question": "When did the mill close?", "answers": ["1894", "1893"]}


def seats(fmt, optional=()):
    """The format's required seats (and the named optional ones), each an AI persona."""
    return tuple(
        SeatInfo(key=s.key, role=s.role, name=f"Speaker {s.key}", side=s.side)
        for s in fmt.seat_specs
        if (s.required or s.key in optional) and not s.human_allowed
    )


def reply(step):
    if step.kind == "SCORE":
        return json.dumps({"score": 6, "reasoning": "Clear."})
    if step.step == "confirm_winner":
        return "Speaker a"
    if step.step == "verdict_json":
        return json.dumps({"winner": "Speaker a", "scores": {"Speaker a": 7, "Speaker b": 5}})
    if step.step in ("answer", "answer_again"):
        return json.dumps({"A": 0.7, "B": 0.3})
    if step.seat == "moderator":
        return "We go on.\nSTATUS: CONTINUE"
    return f"<{step.seat} {step.step} {step.ordinal}>"


def simulate(name, options, optional=()):
    fmt = get_format(name)
    config = DebateConfig(format=name, topic="Should the mill reopen?", options=options, seats=seats(fmt, optional))
    fmt.validate(config)
    calls, records, plan = run(config, reply=reply)
    assert plan.finished
    sided = {k for side in fmt.sides for k in side.seats}
    debaters = sided or {s.key for s in config.seats if s.role not in ("moderator", "judge")}
    public = [r for r in records if r.kind == "TURN" and r.seat in debaters]
    return config, calls, records, public


CASES = [
    ("duel", {"turns": 6}, ("judge",)),
    ("duel", {"turns": 3}, ("judge",)),
    ("classic", {"free_turns": 4}, ()),
    ("classic", {"free_turns": 7}, ()),
    ("structured", {"questions": 1}, ()),
    ("structured", {"questions": 3}, ()),
    ("custom", {"max_rounds": 3}, ()),
    ("standard", {"max_turns": 5}, ()),
    ("panel", {"max_rounds": 2}, ()),
    ("evidence_debate", {**EVIDENCE, "rounds": 2}, ()),
    ("consultancy", {**EVIDENCE, "rounds": 3}, ()),
    ("blind", {**EVIDENCE}, ()),
    ("oracle", {**EVIDENCE}, ()),
]


@pytest.mark.parametrize(("name", "options", "optional"), CASES)
def test_the_counts_are_those_a_run_of_the_format_makes(name, options, optional):
    fmt = get_format(name)
    _, calls, _, public = simulate(name, options, optional)
    assert fmt.calls(options) == len(calls)
    assert fmt.statements(options) == len(public)


@pytest.mark.parametrize(
    ("source", "replay", "options"), [("duel", "judge", {"turns": 4}), ("classic", "sides_judge", {})]
)
def test_a_replays_counts_are_those_of_its_run_over_the_judged_debates_statements(source, replay, options):
    config, _, records, public = simulate(source, options, ("judge",) if source == "duel" else ())
    fmt = get_format(replay)
    replay_options = fmt.replay_options(config, records, source_debate=1)
    judged = DebateConfig(
        format=replay, topic=config.topic, options=replay_options, seats=(SeatInfo("judge", "judge", "Judge Ida"),)
    )
    fmt.validate(judged)
    calls, _, _ = run(judged, reply=reply)
    assert fmt.statements(replay_options) == len(public) == get_format(source).statements(options)
    assert fmt.calls(replay_options) == len(calls)


def test_an_evidence_judge_replay_reads_the_debates_speeches_in_one_call():
    config, _, records, public = simulate("evidence_debate", {**EVIDENCE, "rounds": 2})
    fmt = get_format("evidence_judge")
    options = fmt.replay_options(config, records, source_debate=1)
    calls, _, _ = run(
        DebateConfig(
            format="evidence_judge", topic=config.topic, options=options, seats=(SeatInfo("judge", "judge", "J"),)
        ),
        reply=reply,
    )
    assert (fmt.statements(options), fmt.calls(options), len(calls)) == (len(public), 1, 1)


POLLS = ("sides", "people", "")


def assert_hooks_agree(fmt):
    """What any format says about itself agrees with itself: its sides with its seats, its judging with its judge
    seat and its replay, its poll with its sides. Each format's own test pins the values it chose (its sides' labels,
    its poll); these are the rules every format keeps, built-in, card or registered later."""
    name = fmt.name
    keys = {s.key: s for s in fmt.seat_specs}
    assert len(keys) == len(fmt.seat_specs), name
    # Its sides are the seats that say they argue them, in seat order; every seat's side is one of them.
    assert fmt.sides_for({}) == fmt.sides, name
    assert len(fmt.sides) != 1, name
    assert len({side.key for side in fmt.sides}) == len(fmt.sides), name
    assert all(side.label for side in fmt.sides), name
    assert len({side.label for side in fmt.sides}) == len(fmt.sides), name
    for side in fmt.sides:
        assert side.seats, (name, side.key)
        assert side.seats == tuple(s.key for s in fmt.seat_specs if s.side == side.key), (name, side.key)
    assert {s.side for s in fmt.seat_specs if s.side} <= {side.key for side in fmt.sides}, name
    # Two sides are not a ranking; more are.
    assert fmt.ranks_teams() == (len(fmt.sides) > 2), name
    # Two sides argue a motion (one for, one against) or neither does (more teams may share a stance); its seat for
    # a stance is the first seat of the first side taking it.
    stances = sorted(side.stance for side in fmt.sides if side.stance)
    assert set(stances) <= {"for", "against"}, name
    if len(fmt.sides) == 2:
        assert stances in ([], ["against", "for"]), name
    for stance in ("for", "against"):
        side = next((s for s in fmt.sides if s.stance == stance), None)
        assert fmt.seat_for(stance) == (side.seats[0] if side else None), (name, stance)
    # Sides that argue answers rather than a motion are two, and name the option that lists them.
    if fmt.side_answers_option:
        assert len(fmt.sides) == 2 and not stances, name
    # It is judged by its judge seat inside it, else by its replay afterwards, else not at all (or by referees).
    assert fmt.judging in JUDGING, name
    if fmt.judging == "referees":
        assert fmt.referee_seats, name
        assert all(keys[k].role == "judge" for k in fmt.referee_seats), name
    else:
        expected = "in_debate" if fmt.judge_seat else "replay" if fmt.replayed_by else "none"
        assert fmt.judging == expected, name
    # Its judge seat is one of its seats, a judge's, on no side.
    if fmt.judge_seat is not None:
        assert fmt.judge_seat in keys, name
        assert keys[fmt.judge_seat].role == "judge", name
        assert not keys[fmt.judge_seat].side, name
        assert all(fmt.judge_seat not in side.seats for side in fmt.sides), name
    # Its replay is a format that replays a debate; such a format is its one judge seat, judging inside.
    if fmt.replayed_by:
        assert FORMATS[fmt.replayed_by].replays_a_debate, name
    if fmt.replays_a_debate:
        assert [s.key for s in fmt.seat_specs] == [fmt.judge_seat], name
        assert (fmt.judging, fmt.sides, fmt.poll) == ("in_debate", (), ""), name
    # Its poll is for or against one of two sides, a people's choice, or none.
    assert fmt.poll in POLLS, name
    if fmt.poll == "sides":
        assert len(fmt.sides) == 2, name


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_formats_hooks_agree_with_its_seats_sides_and_judging(name):
    assert_hooks_agree(FORMATS[name])


CARDS = Path(__file__).resolve().parents[3] / "cards"


@pytest.mark.parametrize("card", sorted(p.name for p in CARDS.glob("*.yaml")))
def test_every_shipped_cards_hooks_agree_too(card):
    assert_hooks_agree(get_format("card", (CARDS / card).read_text()))


def test_the_seat_for_and_against_a_motion():
    assert [
        (n, FORMATS[n].seat_for("for"), FORMATS[n].seat_for("against")) for n in ("duel", "classic", "structured")
    ] == [
        ("duel", "a", "b"),
        ("classic", "pro", "con"),
        ("structured", "affirmative", "negative"),
    ]
    # Sides that argue answers, not a motion; and formats without sides.
    assert FORMATS["evidence_debate"].seat_for("for") is None
    assert FORMATS["panel"].seat_for("for") is None
    assert FORMATS["evidence_debate"].side_answers_option == "answers"
    assert FORMATS["duel"].side_answers_option == ""


def test_a_format_that_ranks_more_than_two_teams():
    class Four(type(FORMATS["custom"])):
        sides = tuple(Side(k, k.upper(), (f"{k}1", f"{k}2")) for k in ("og", "oo", "cg", "co"))

    assert Four().ranks_teams()
    assert Four().seat_for("for") is None


def test_step_titles_head_an_export_and_name_a_cross_examination():
    structured, duel, classic = FORMATS["structured"], FORMATS["duel"], FORMATS["classic"]
    assert structured.step_title("question_2") == "Cross-examination question 2"
    assert structured.step_title("answer_1") == "Cross-examination answer 1"
    assert structured.step_title("rebuttal") == "Rebuttal"
    assert duel.step_title("opening") == "Opening statement"
    assert duel.step_title("respond_final") == "Closing argument"
    assert duel.step_title("respond") == ""  # an ordinary turn names no step
    assert classic.step_title("pro_opening") == "Pro opening"
    assert FORMATS["panel"].step_title("human") == ""


def test_the_default_format_is_a_listed_one():
    assert DEFAULT_FORMAT == "duel"
    assert DEFAULT_FORMAT in LISTED
