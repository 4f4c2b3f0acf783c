"""Classic, standard and custom (scheduling.md) as pure functions: sequence, exact instructions, context."""

from dataclasses import replace

import pytest

from debates.formats import DebateConfig, FormatError, SeatInfo, Side, get_format
from tests.simulate import run, user_message

MOD = SeatInfo("moderator", "moderator", "Sam", system_prompt="Sam's persona")
PRO = SeatInfo("pro", "debater", "Ada", "pro", "Ada's persona")
CON = SeatInfo("con", "debater", "Bob", "con", "Bob's persona")
P1 = SeatInfo("p1", "debater", "Ada", system_prompt="Ada's persona")
P2 = SeatInfo("p2", "debater", "Bob", system_prompt="Bob's persona")
HUMAN = SeatInfo("human", "participant", "Alex", is_human=True)


def classic(**options):
    return DebateConfig(
        format="classic", topic="Remote work", options={"free_turns": 2, **options}, seats=(MOD, PRO, CON)
    )


def systems(records):
    return [r.content for r in records if r.kind == "SYSTEM"]


def speakers(records):
    return [r.seat for r in records if r.kind in ("TURN", "USER")]


def test_classic_runs_the_nine_stages_in_order_with_a_real_free_exchange():
    calls, records, plan = run(classic())
    assert plan.finished
    assert speakers(records) == [
        "moderator",
        "pro",
        "con",
        "pro",
        "con",
        "moderator",
        "pro",
        "con",
        "moderator",
        "pro",
        "con",
        "moderator",
    ]
    assert [c.step for c in calls] == [
        "introduction",
        "pro_opening",
        "con_opening",
        "pro_rebuttal",
        "con_rebuttal",
        "free",
        "free",
        "free",
        "free",
        "pro_summary",
        "con_summary",
        "conclusion",
    ]
    assert systems(records) == [
        "[SYSTEM]: Topic: Remote work. Moderator, please introduce the topic and the participants.",
        "[SYSTEM]: Opening statements. Ada, please give your opening statement in favour of the motion.",
        "[SYSTEM]: Bob, please give your opening statement against the motion.",
        "[SYSTEM]: Rebuttals. Ada, please rebut Bob's opening statement.",
        "[SYSTEM]: Bob, please rebut Ada's opening statement.",
        "[SYSTEM]: Free debate. Moderator, please open the floor for a free exchange between Ada and Bob.",
        "[SYSTEM]: Free debate. Ada is speaking next.",
        "[SYSTEM]: Free debate. Bob is speaking next.",
        "[SYSTEM]: The free debate is over. Moderator, please close the exchange and invite the summaries.",
        "[SYSTEM]: Summaries. Ada, please summarize your case.",
        "[SYSTEM]: Bob, please summarize your case.",
        "[SYSTEM]: Moderator, please conclude the debate.",
    ]
    # Every SYSTEM line comes right before the turn it announces, and ordinals have no gaps.
    assert [r.ordinal for r in records] == list(range(len(records)))
    assert all(records[i].kind == "SYSTEM" and records[i + 1].kind == "TURN" for i in range(1, len(records), 2))


def test_each_seat_sees_the_public_transcript_and_its_stage_before_the_turn():
    calls, _records, _ = run(classic())
    con_rebuttal = next(c for c in calls if c.step == "con_rebuttal")
    system, *rest = con_rebuttal.messages
    assert system["role"] == "system"
    assert system["content"] == (
        "Bob's persona\n\nThe debate topic is: Remote work\nYou are Bob (Con), the debater in this debate.\n"
        "Stage 5 of 9: con rebuttal."
    )
    # Roles alternate: others' turns and SYSTEM lines as the user, Bob's own as the assistant.
    assert [m["role"] for m in rest] == ["user", "assistant", "user"]
    assert rest[0]["content"] == (
        "[SYSTEM]: Topic: Remote work. Moderator, please introduce the topic and the participants.\n\n"
        "Sam: <moderator introduction 2>\n\n"
        "[SYSTEM]: Opening statements. Ada, please give your opening statement in favour of the motion.\n\n"
        "Ada: <pro pro_opening 4>\n\n"
        "[SYSTEM]: Bob, please give your opening statement against the motion."
    )
    assert rest[1]["content"] == "<con con_opening 6>"
    assert rest[2]["content"].endswith(
        "Ada: <pro pro_rebuttal 8>\n\n[SYSTEM]: Bob, please rebut Ada's opening statement."
    )
    free = next(c for c in calls if c.step == "free" and c.seat == "pro")
    assert free.messages[0]["content"].endswith("Stage 6 of 9: free. Free exchange, turn 1 of 2.")


@pytest.mark.parametrize("after_turns", [0, 1, 3, 7])
def test_end_debate_in_classic_brings_the_moderators_final_summary_next(after_turns):
    cfg = classic()
    _, records, _ = run(cfg, until=lambda rs: len(speakers(rs)) >= after_turns and any(r.kind == "HEADER" for r in rs))
    calls, records, plan = run(replace(cfg, is_ending=True), records)
    assert plan.finished
    assert [(c.seat, c.prompt) for c in calls] == [
        ("moderator", "[SYSTEM]: Manual termination triggered. Moderator, please provide a final summary.")
    ]
    assert speakers(records)[-1] == "moderator" and len(speakers(records)) == after_turns + 1


def standard(human=False, moderator=True, **options):
    seats = ((MOD,) if moderator else ()) + (P1, P2) + ((HUMAN,) if human else ())
    return DebateConfig(format="standard", topic="Remote work", options={"max_turns": 6, **options}, seats=seats)


def test_standard_is_intro_then_round_robin_until_the_turn_cap():
    calls, records, plan = run(standard())
    assert plan.finished
    assert systems(records) == [
        "[SYSTEM]: Topic: Remote work. Moderator, please introduce the topic and the participants.",
        "[SYSTEM]: Opening floor. Ada is speaking next.",
        "[SYSTEM]: Next speaker: Bob.",
        "[SYSTEM]: Next speaker: Ada.",
        "[SYSTEM]: Next speaker: Bob.",
        "[SYSTEM]: Next speaker: Ada.",
        "[SYSTEM]: Next speaker: Bob.",
        "[SYSTEM]: Turn limit reached. Moderator, please summarize and conclude.",
    ]
    assert calls[3].messages[0]["content"].endswith("Round 2, turn 3.")


def test_standard_without_a_moderator_opens_the_floor_at_once_and_just_stops_when_ended():
    calls, records, plan = run(standard(moderator=False, max_turns=2))
    assert systems(records) == ["[SYSTEM]: Opening floor. Ada is speaking next.", "[SYSTEM]: Next speaker: Bob."]
    _, records, _ = run(standard(moderator=False), until=lambda rs: len(speakers(rs)) == 1)
    calls, _, plan = run(replace(standard(moderator=False), is_ending=True), records)
    assert calls == [] and plan.finished


def test_the_human_seat_waits_and_speaks_twice_in_order():
    cfg = standard(human=True, max_turns=7)
    calls, records, plan = run(cfg)
    assert plan.waiting_for == "human" and not plan.finished
    assert systems(records)[-1] == "[SYSTEM]: Next speaker: Alex."
    user_message(records, "human", "Hybrid is best.")
    calls, records, plan = run(cfg, records)
    assert plan.waiting_for == "human"
    # The human's words reach the next speaker as theirs.
    assert "Alex: Hybrid is best." in calls[0].messages[-1]["content"]
    user_message(records, "human", "Offices still matter.")
    calls, records, plan = run(cfg, records)
    assert plan.finished
    assert speakers(records) == ["moderator", "p1", "p2", "human", "p1", "p2", "human", "p1", "moderator"]
    assert [r.content for r in records if r.kind == "USER"] == ["Hybrid is best.", "Offices still matter."]


def test_ending_while_the_human_is_awaited_goes_to_the_summary():
    cfg = standard(human=True)
    _, records, plan = run(cfg)
    assert plan.waiting_for == "human"
    calls, records, plan = run(replace(cfg, is_ending=True), records)
    assert plan.finished and [c.seat for c in calls] == ["moderator"]
    assert systems(records)[-1] == "[SYSTEM]: Manual termination triggered. Moderator, please provide a final summary."


def test_a_persona_cannot_take_the_human_seat():
    seats = (MOD, P1, P2, SeatInfo("human", "participant", "Eve"))
    with pytest.raises(FormatError, match="The human seat is for a person"):
        get_format("standard").validate(DebateConfig(format="standard", topic="x", seats=seats))


def custom(**options):
    return DebateConfig(format="custom", topic="Remote work", options={"max_rounds": 2, **options}, seats=(MOD, P1, P2))


def test_custom_runs_max_rounds_then_the_summary():
    calls, records, plan = run(custom())
    assert plan.finished
    assert speakers(records) == ["moderator", "p1", "p2", "p1", "p2", "moderator"]
    assert systems(records)[-1] == "[SYSTEM]: Max rounds reached. Moderator, please summarize and conclude."
    assert calls[3].messages[0]["content"].endswith("Round 2 of 2, turn 3.")
    assert [c.data["round"] for c in calls] == [0, 1, 1, 2, 2, 0]


@pytest.mark.parametrize("after_turns", [1, 2, 4])
def test_end_debate_in_custom(after_turns):
    _, records, _ = run(custom(), until=lambda rs: len(speakers(rs)) >= after_turns)
    calls, records, plan = run(replace(custom(), is_ending=True), records)
    assert plan.finished and [c.seat for c in calls] == ["moderator"]
    assert calls[0].prompt == "[SYSTEM]: Manual termination triggered. Moderator, please provide a final summary."


def test_word_limit_option_reaches_every_turn():
    calls, _, _ = run(custom(word_limit=50))
    assert {c.word_limit for c in calls} == {50}


def test_their_sides_judging_and_polls():
    # What each chose; tests/debates/formats/test_interface.py checks they agree with each other.
    classic, standard, custom = (get_format(n) for n in ("classic", "standard", "custom"))
    assert classic.sides == (Side("pro", "Pro", ("pro",), "for"), Side("con", "Con", ("con",), "against"))
    assert (classic.judging, classic.judge_seat, classic.poll) == ("replay", None, "sides")
    for fmt in (standard, custom):
        assert fmt.sides == ()
        assert (fmt.judging, fmt.judge_seat, fmt.poll) == ("none", None, "people")
