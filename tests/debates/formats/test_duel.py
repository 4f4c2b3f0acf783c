"""The judged duel as a pure function: step sequence, exact prompts, histories. No LLM, no database."""

import json

import pytest

from debates.formats import DebateConfig, Record, SeatInfo, Side
from debates.formats.duel import Duel, match_name

DUEL = Duel()
A = SeatInfo("a", "debater", "Ada", "for", "Ada's system prompt")
B = SeatInfo("b", "debater", "Bob", "against", "Bob's system prompt")
J = SeatInfo("judge", "judge", "Judy", "", "Judy's system prompt")


def config(turns=6, judge=True, premise="Cities should ban cars", is_ending=False):
    seats = (A, B, J) if judge else (A, B)
    return DebateConfig(
        format="duel",
        topic="Cars in cities",
        premise=premise,
        options={"turns": turns},
        seats=seats,
        is_ending=is_ending,
    )


def reply_for(step, winner="Bob"):
    if step.step in ("score", "score_first"):
        data = {"score": 5 + step.ordinal % 4, "reasoning": f"reason {step.ordinal}"}
        return json.dumps(data), data
    if step.step == "confirm_winner":
        return winner, {}
    if step.step == "verdict_json":
        data = {"winner": winner, "scores": {"Ada": 6, "Bob": 8}}
        return json.dumps(data), data
    return f"<{step.seat} {step.step} {step.ordinal}>", {}


def land(records, step, reply=reply_for):
    content, data = reply(step) if step.calls_llm else (step.content, {})
    records.append(
        Record(
            ordinal=step.ordinal,
            kind=step.kind,
            seat=step.seat,
            step=step.step,
            prompt=step.prompt,
            content=content,
            data={**step.data, **data},
            visibility=step.visibility,
        )
    )


def run(cfg, records=None, reply=reply_for, stop=None):
    """Run every ready step in waves, as the engine does; return (calls in order, waves, records)."""
    records = list(records or [])
    calls, waves = [], []
    while True:
        plan = DUEL.next_steps(cfg, records)
        if not plan.steps:
            assert plan.finished
            return calls, waves, records
        waves.append(sorted(s.ordinal for s in plan.steps if s.calls_llm))
        for step in plan.steps:
            land(records, step, reply)
            if step.calls_llm:
                calls.append(step)
        if stop and stop(records):
            return calls, waves, records


def test_six_turns_with_a_judge_is_thirty_calls_in_the_spec_order():
    calls, _, _ = run(config())
    assert len(calls) == 30
    assert [(c.seat, c.step) for c in sorted(calls, key=lambda c: c.ordinal)] == [
        ("a", "plan"),
        ("b", "plan"),
        ("a", "think_opening"),
        ("a", "opening"),
        ("judge", "evaluate"),
        ("judge", "score_first"),
        ("b", "think"),
        ("b", "respond"),
        ("judge", "evaluate"),
        ("judge", "score_first"),
        ("a", "think"),
        ("a", "respond"),
        ("judge", "evaluate"),
        ("judge", "score"),
        ("b", "think"),
        ("b", "respond"),
        ("judge", "evaluate"),
        ("judge", "score"),
        ("a", "think_final"),
        ("a", "respond_final"),
        ("judge", "evaluate"),
        ("judge", "score"),
        ("b", "think_final"),
        ("b", "respond_final"),
        ("judge", "evaluate"),
        ("judge", "score"),
        ("judge", "deliberate"),
        ("judge", "confirm_winner"),
        ("judge", "verdict_json"),
        ("judge", "announce"),
    ]
    assert [c.ordinal for c in sorted(calls, key=lambda c: c.ordinal)] == list(range(1, 31))
    kinds = {c.step: c.kind for c in calls}
    assert kinds == {
        "plan": "PLAN",
        "think_opening": "THINK",
        "opening": "TURN",
        "evaluate": "THINK",
        "score_first": "SCORE",
        "score": "SCORE",
        "think": "THINK",
        "respond": "TURN",
        "think_final": "THINK",
        "respond_final": "TURN",
        "deliberate": "THINK",
        "confirm_winner": "INTERNAL",
        "verdict_json": "INTERNAL",
        "announce": "VERDICT",
    }


def test_ready_steps_run_together_so_the_critical_path_is_nineteen_calls():
    _, waves, _ = run(config())
    assert len(waves) == 19
    assert waves[0] == [1, 2]  # both plans at once
    # The judge evaluates A's opening while B thinks about it.
    assert waves[3] == [5, 7]
    assert waves[4] == [6, 8]


def test_without_a_judge_there_are_no_judge_calls_and_no_verdict():
    cfg = config(judge=False)
    calls, _, records = run(cfg)
    assert len(calls) == 14
    assert {c.seat for c in calls} == {"a", "b"}
    assert DUEL.outcome(cfg, records) == {}


PLAN = """The debate topic is: Cars in cities

Before the debate begins, privately plan your argument. What are your two or
three strongest points? What counterarguments do you expect, and how will you
answer them?"""

THINK_OPENING_WITH_PREMISE = """The debate topic is: Cars in cities

You are arguing FOR the premise: "Cities should ban cars"

Your opponent is Bob. You are about to deliver your opening statement.
Privately consider: what is the strongest point to lead with?
How will you frame your position from the start?
Do not deliver your opening statement yet."""

OPENING_WITHOUT_PREMISE = """The debate topic is: Cars in cities

Your opponent is Bob. Deliver your opening argument now, in your own voice.
Speak directly and make your case. Do not write stage directions, do not write
your opponent's lines, and do not present both sides — give only your own argument."""

EVALUATE_A = """Ada just argued:

"<a opening 4>"

Privately consider this argument. How coherent is the logic? If evidence is
used, does it actually warrant the conclusion, or does it merely suggest it?
If they are challenging their opponent's evidence, is that challenge
well-reasoned — and if so, credit it as a strong move in its own right.
How effective is the rhetoric? Note strengths and weaknesses. Do not score yet."""

SCORE_FIRST_A = """Give Ada an initial score out of 10 based on this first impression.
Respond with a JSON object in exactly this format:
{"score": 7, "reasoning": "One sentence explaining the score."}
The score must be a whole number between 0 and 10 inclusive."""

SCORE_RUNNING_A = """Give your current running score for Ada out of 10. This is a
cumulative score reflecting their whole performance so far — revise it up if
they've strengthened their case, or down if they've been rebutted.
Respond with a JSON object in exactly this format:
{"score": 7, "reasoning": "One sentence explaining any change."}
The score must be a whole number between 0 and 10 inclusive."""

THINK_B = """Your opponent just said:

"<a opening 4>"

Before you respond, privately reflect: What did they get right or wrong?
How does this shift the argument? How might the audience be reacting?
Plan what you'll say next. Do not give your debate response yet."""

THINK_FINAL_A = """Your opponent just said:

"<b respond 16>"

Before you respond, privately reflect: What did they get right or wrong?
How does this shift the argument? How might the audience be reacting?
Plan what you'll say next. This is your final turn — plan a strong closing argument that
summarises your case and lands a decisive point. Do not give your debate response yet."""

RESPOND = """Now give your actual debate response, in character.
Speak in your own voice only — do not write stage directions,
do not write your opponent's lines, and do not present both sides."""

RESPOND_FINAL = """This is your final turn. Deliver your closing argument:
summarise your strongest points, rebut your opponent's key claim,
and make a clear case for why you have won this debate.
Speak in your own voice only — do not write stage directions,
do not write your opponent's lines, and do not present both sides."""

DELIBERATE = """The debate premise was:
  Ada argued FOR the premise: "Cities should ban cars"
  Bob argued AGAINST the premise: "Cities should ban cars"

The debate is over. Privately weigh up what you just heard.
Who made the stronger case and why? Which specific arguments or moments swayed
you, and which fell flat? Give each debater a score out of 10 and decide on a
winner. Be specific. Write in the first person — use 'I', 'my', 'in my view'.
Do not refer to yourself by name or in the third person."""

CONFIRM = """Based on your deliberation, who won?
Reply with exactly one of these names and nothing else: 'Ada' or 'Bob'."""

EXTRACT = """Now express that verdict as a JSON object in exactly this format:
{"winner": "Ada", "scores": {"Ada": 8, "Bob": 6}}
The "winner" must be 'Bob' — consistent with your deliberation above.
The "scores" dict must contain entries for both names.
All scores must be whole numbers between 0 and 10."""

ANNOUNCE = """Now deliver your verdict to the debaters and audience, briefly.
State who won, what they did well, and what let the other side down.
Write in the first person — use 'I', 'my', 'in my view'.
Do not refer to yourself by name or in the third person.
No more than a short paragraph."""


def prompts(calls):
    return {c.ordinal: c.prompt for c in calls}


def test_every_prompt_is_the_spec_text_with_a_premise():
    p = prompts(run(config())[0])
    assert p[1] == PLAN and p[2] == PLAN
    assert p[3] == THINK_OPENING_WITH_PREMISE
    assert p[4] == THINK_OPENING_WITH_PREMISE.replace(
        "You are about to deliver your opening statement.\nPrivately consider: what is the strongest point to "
        "lead with?\nHow will you frame your position from the start?\nDo not deliver your opening statement yet.",
        "Deliver your opening argument now, in your own voice.\nSpeak directly and make your case. Do not write "
        "stage directions, do not write\nyour opponent's lines, and do not present both sides — give only your "
        "own argument.",
    )
    assert p[5] == EVALUATE_A
    assert p[6] == SCORE_FIRST_A
    assert p[7] == THINK_B
    assert p[8] == RESPOND
    assert p[10] == SCORE_FIRST_A.replace("Ada", "Bob")
    assert p[14] == SCORE_RUNNING_A
    assert p[18] == SCORE_RUNNING_A.replace("Ada", "Bob")
    assert p[19] == THINK_FINAL_A
    assert p[20] == RESPOND_FINAL and p[24] == RESPOND_FINAL
    assert p[16] == RESPOND
    assert p[27] == DELIBERATE
    assert p[28] == CONFIRM
    assert p[29] == EXTRACT
    assert p[30] == ANNOUNCE


def test_without_a_premise_the_premise_blocks_are_left_out():
    p = prompts(run(config(premise=""))[0])
    assert p[4] == OPENING_WITHOUT_PREMISE
    assert "premise" not in p[3]
    assert p[27] == DELIBERATE.split("\n\n", 1)[1]


def test_extraction_accepts_either_name_when_the_confirmation_matches_neither():
    calls, _, _ = run(config(), reply=lambda s: reply_for(s, winner="Nobody really"))
    extract = next(c for c in calls if c.step == "verdict_json")
    assert "The \"winner\" must be 'Ada' or 'Bob' — consistent" in extract.prompt
    assert extract.json_schema["properties"]["winner"]["enum"] == ["Ada", "Bob"]


def test_histories_are_each_seats_own_steps_only():
    calls, _, records = run(config())
    by_ordinal = {r.ordinal: r for r in records}
    names = {"a": "Ada", "b": "Bob", "judge": "Judy"}
    for call in calls:
        text = json.dumps(call.messages)
        assert call.messages[0] == {"role": "system", "content": f"{names[call.seat]}'s system prompt"}
        # (The winner confirmation, a bare name, is left out: names appear everywhere.)
        others_private = [
            r.content
            for r in records
            if r.seat != call.seat
            and r.step != "confirm_winner"
            and (r.kind in ("PLAN", "THINK", "INTERNAL") or r.seat == "judge")
        ]
        assert not any(secret in text for secret in others_private), call
        # The history is exactly the seat's earlier (prompt, reply) pairs, in ordinal order.
        earlier = [by_ordinal[o] for o in sorted(by_ordinal) if o < call.ordinal and by_ordinal[o].seat == call.seat]
        expected = [call.messages[0]]
        for record in earlier:
            expected += [{"role": "user", "content": record.prompt}, {"role": "assistant", "content": record.content}]
        expected.append({"role": "user", "content": call.prompt})
        assert list(call.messages) == expected


def test_the_judge_sees_public_statements_and_nothing_private():
    calls, _, records = run(config())
    announce = next(c for c in calls if c.step == "announce")
    text = json.dumps(announce.messages)
    for record in records:
        if record.seat in ("a", "b"):
            assert (record.content in text) == (record.kind == "TURN"), record


def test_b_sees_the_opening_only_through_its_think_prompt():
    calls, _, _ = run(config())
    b_respond = next(c for c in calls if c.ordinal == 8)
    assert [m["role"] for m in b_respond.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert b_respond.messages[3]["content"] == THINK_B


def test_outcome_from_the_verdict_json_and_premise_upheld_from_the_winners_side():
    cfg = config()
    _, _, records = run(cfg)
    outcome = DUEL.outcome(cfg, records)
    assert outcome == {
        "winner": "Bob",
        "scores": {"Ada": 6, "Bob": 8},
        "premise_upheld": False,
        "announcement": "<judge announce 30>",
    }
    _, _, records = run(cfg, reply=lambda s: reply_for(s, winner="Ada"))
    assert DUEL.outcome(cfg, records)["premise_upheld"] is True


def test_outcome_falls_back_to_the_confirmed_winner_and_running_scores_when_the_json_failed():
    cfg = config(turns=2)

    def reply(step):
        if step.step == "verdict_json":
            return "no json here", {"fallback": True}
        if step.step == "score_first":
            data = {"score": 9 if step.data["for"] == "a" else 4, "reasoning": "r"}
            return json.dumps(data), data
        return reply_for(step, winner="Ada")

    _, _, records = run(cfg, reply=reply)
    assert DUEL.outcome(cfg, records) == {
        "winner": "Ada",
        "scores": {"Ada": 9, "Bob": 4},
        "premise_upheld": True,
        "announcement": "<judge announce 14>",
    }


def test_invalid_scores_after_retries_keep_the_previous_running_score():
    cfg = config(turns=4)

    def reply(step):
        if step.step == "score" and step.data["for"] == "a":
            return "Ada deserves about seven", {"fallback": True}
        return reply_for(step)

    _, _, records = run(cfg, reply=reply)
    first_score_for_a = next(r for r in records if r.ordinal == 6).data["score"]
    assert DUEL.running_scores(cfg, records)["Ada"] == first_score_for_a == 7


def test_end_early_skips_to_the_verdict_on_the_turns_so_far():
    cfg = config()
    _, _, records = run(cfg, stop=lambda rs: any(r.ordinal == 12 for r in rs))  # A's second statement landed
    ending = config(is_ending=True)
    calls, _, records = run(ending, records)
    assert [c.step for c in calls] == ["evaluate", "score", "deliberate", "confirm_winner", "verdict_json", "announce"]
    assert [c.ordinal for c in calls] == [13, 14, 27, 28, 29, 30]
    assert not any(r.ordinal in (15, 16) for r in records)
    assert DUEL.outcome(ending, records)["winner"] == "Bob"


def test_end_before_any_statement_finishes_without_a_verdict():
    _, _, records = run(config(), stop=lambda rs: len(rs) >= 3)  # header and plans
    plan = DUEL.next_steps(config(is_ending=True), records)
    assert plan.steps == () and plan.finished


def test_end_drops_a_think_whose_statement_never_came():
    _, _, records = run(config(), stop=lambda rs: any(r.ordinal == 11 for r in rs))
    assert 11 in {r.ordinal for r in records} and 12 not in {r.ordinal for r in records}
    calls, _, records = run(config(is_ending=True), records)
    assert [c.ordinal for c in calls] == [10, 27, 28, 29, 30]
    assert 12 not in {r.ordinal for r in records}


def test_one_turn_is_only_an_opening_then_the_verdict():
    calls, _, _ = run(config(turns=1))
    assert [c.step for c in sorted(calls, key=lambda c: c.ordinal)] == [
        "plan",
        "plan",
        "think_opening",
        "opening",
        "evaluate",
        "score_first",
        "deliberate",
        "confirm_winner",
        "verdict_json",
        "announce",
    ]


def test_two_turns_make_bs_only_turn_its_final_one():
    calls, _, _ = run(config(turns=2))
    assert {c.ordinal: c.step for c in calls}[7] == "think_final"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Bob", "Bob"),
        ("'Ada'", "Ada"),
        ("bob.", "Bob"),
        ("The winner is Ada, clearly.", "Ada"),
        ("Ada narrowly beat Bob", "Ada"),
        ("Neither", None),
        ("Bobby", None),
    ],
)
def test_match_name(reply, expected):
    assert match_name(reply, ["Ada", "Bob"]) == expected


def test_header_comes_first_without_a_call():
    plan = DUEL.next_steps(config(), [])
    header = plan.steps[0]
    assert (header.ordinal, header.kind, header.calls_llm) == (0, "HEADER", False)
    assert header.data["premise"] == "Cities should ban cars"


def test_its_sides_judge_and_poll():
    # What the duel chose; tests/debates/formats/test_interface.py checks they agree with each other.
    fmt = Duel()
    assert fmt.sides == (Side("for", "For", ("a",), "for"), Side("against", "Against", ("b",), "against"))
    assert (fmt.judging, fmt.judge_seat, fmt.poll) == ("in_debate", "judge", "sides")
