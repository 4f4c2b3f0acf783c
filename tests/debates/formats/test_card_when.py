"""Conditional steps (docs/cards.md, "Steps given on an answer"): a speech with `when` runs only when an earlier
speech's answer says so: a point of information offered, then accepted or declined, between the two halves of a
speech; an objection ruled on by the judge before the witness answers. What each seat is asked, what runs and
what does not, the plan showing both branches, and the card's problems. The pure driver: no database, no model."""

import json

import pytest

from debates.formats.card import parse_card
from debates.formats.card.doc import protocol_markdown
from tests.debates.formats.test_card import config_for, problems_of
from tests.debates.formats.test_card_equivalence import run

POI = """
name: poi-test
title: POI test
sides:
  - {key: gov, label: Government, stance: for}
  - {key: opp, label: Opposition, stance: against}
seats:
  - {key: pm, role: debater, label: Prime Minister, side: gov}
  - {key: lo, role: debater, label: Leader of the Opposition, side: opp}
stages:
  - speech: pm_first
    label: Prime Minister, first half
    seat: pm
    prompt: "Open the case for: {topic}"
  - speech: offer
    label: Point offered
    seat: lo
    sees: all
    answer: [offer, pass]
    prompt: "Offer a point of information to {pm}, or pass."
  - speech: reply
    label: Point taken
    seat: pm
    answer: [accept, decline]
    when: {step: offer, answer: offer}
    prompt: "{lo} rises with a point. Accept or decline?"
  - speech: poi
    label: Point of information
    seat: lo
    when: {step: reply, answer: accept}
    prompt: "Make your point to {pm} in one sentence."
  - speech: pm_second
    label: Prime Minister, second half
    seat: pm
    sees: all
    prompt: "Finish your speech."
"""

TRIAL = """
name: trial-test
title: Trial test
sides:
  - {key: pros, label: Prosecution, stance: for}
  - {key: def, label: Defence, stance: against}
seats:
  - {key: counsel, role: debater, label: Prosecutor, side: pros}
  - {key: witness, role: debater, label: Defence witness, side: def}
  - {key: bench, role: moderator, label: Presiding judge}
stages:
  - speech: question
    seat: counsel
    prompt: "Ask the witness one question about {topic}."
  - speech: objection
    seat: witness
    sees: all
    answer: [object, none]
    prompt: "Object to the question, or not."
  - speech: ruling
    seat: bench
    sees: all
    answer: [sustained, overruled]
    when: {step: objection, answer: object}
    prompt: "Rule on the objection."
  - speech: testimony
    seat: witness
    sees: all
    when: {step: ruling, not: sustained}
    prompt: "Answer the question."
"""


def answering(choices: dict[str, str]):
    """Replies for the driver: each answering step gives the answer `choices` names for it."""

    def reply(step):
        if step.json_schema is None:
            return f"<{step.seat} {step.step}>", {}
        data = {"reasoning": f"{step.seat} reasons", "answer": choices[step.step]}
        return json.dumps(data), {**data, "answer_kind": "choice"}

    return reply


def steps_run(text, choices):
    card = parse_card(text)
    steps, _, _, plan = run(card, config_for(card), reply=answering(choices))
    assert plan.finished
    return [s.step for s in steps if s.calls_llm], steps


@pytest.mark.parametrize(
    ("choices", "ran"),
    [
        ({"offer": "pass"}, ["pm_first", "offer", "pm_second"]),
        ({"offer": "offer", "reply": "decline"}, ["pm_first", "offer", "reply", "pm_second"]),
        ({"offer": "offer", "reply": "accept"}, ["pm_first", "offer", "reply", "poi", "pm_second"]),
    ],
    ids=["passed", "declined", "accepted"],
)
def test_a_point_of_information_runs_only_as_far_as_its_answers_say(choices, ran):
    assert steps_run(POI, choices)[0] == ran


def test_the_speaker_hears_the_point_taken_and_finishes_after_it():
    _, steps = steps_run(POI, {"offer": "offer", "reply": "accept"})
    by_step = {s.step: s for s in steps}
    assert by_step["reply"].prompt == "Lo-name rises with a point. Accept or decline?"
    assert by_step["poi"].prompt == "Make your point to Pm-name in one sentence."
    # The second half sees everything said: the point among it, just before its own instruction.
    said = [m["content"] for m in by_step["pm_second"].messages if m["role"] == "user"]
    assert "Lo-name: <lo poi>" in said[-1] and said[-1].endswith("Finish your speech.")


@pytest.mark.parametrize(
    ("choices", "ran"),
    [
        ({"objection": "none"}, ["question", "objection", "testimony"]),
        ({"objection": "object", "ruling": "overruled"}, ["question", "objection", "ruling", "testimony"]),
        ({"objection": "object", "ruling": "sustained"}, ["question", "objection", "ruling"]),
    ],
    ids=["no-objection", "overruled", "sustained"],
)
def test_the_witness_answers_unless_the_objection_is_sustained(choices, ran):
    assert steps_run(TRIAL, choices)[0] == ran


def test_a_conditional_step_waits_for_the_answer_it_runs_on():
    card = parse_card(POI)
    config = config_for(card)
    reply = answering({"offer": "offer", "reply": "accept"})
    _, waves, _, _ = run(card, config, reply=reply)
    assert waves[:4] == [[1], [2], [3], [4]]  # one at a time: each waits for the answer before it


def test_the_plan_shows_both_branches_and_counts_the_fewest_and_most_calls():
    card = parse_card(TRIAL)
    plan = {c.step: c.when for c in card.plan({})}
    assert plan == {
        "question": "",
        "objection": "",
        "ruling": "only if the answer to \"objection\" is 'object'",
        "testimony": "unless the answer to \"ruling\" is 'sustained'",
    }
    assert (card.fewest_calls({}), card.calls({})) == (3, 4)
    page = protocol_markdown(card)
    assert (
        '| 3 | Presiding judge | speech with an answer (one of "sustained", "overruled"), '
        "only if the answer to \"objection\" is 'object' | ruling |"
    ) in page
    assert "speech, unless the answer to \"ruling\" is 'sustained'" in page
    assert "3 to 4 calls" in page


@pytest.mark.parametrize(
    ("when", "field", "message"),
    [
        (
            "{step: nowhere, answer: offer}",
            "stages[3].when.step",
            "A speech runs on the answer of an earlier speech with choices; 'nowhere' is none (those are offer).",
        ),
        (
            "{step: pm_first, answer: offer}",
            "stages[3].when.step",
            "A speech runs on the answer of an earlier speech with choices; 'pm_first' is none (those are offer).",
        ),
        ("{step: offer, answer: maybe}", "stages[3].when.answer", "'offer' answers offer, pass, not maybe."),
        (
            "{step: offer, answer: offer, not: pass}",
            "stages[3].when.answer",
            "Say the answers it runs on ('answer') or those it does not run on ('not'), one.",
        ),
    ],
    ids=["unknown", "no-choices", "not-a-choice", "both"],
)
def test_a_bad_condition_is_refused_with_its_field(when, field, message):
    text = POI.replace("when: {step: offer, answer: offer}", f"when: {when}")
    problems = problems_of(text)
    assert [(p.field, p.message) for p in problems] == [(field, message)]


def test_a_speech_cannot_run_on_a_later_speechs_answer():
    text = POI.replace("when: {step: reply, answer: accept}", "when: {step: later, answer: yes}") + (
        "  - speech: later\n    seat: lo\n    answer: [yes, no]\n    prompt: Later.\n"
    )
    assert [p.field for p in problems_of(text)] == ["stages[4].when.step"]


# --- whichever seat rises: `by` ----------------------------------------------------------------------------------
BENCH = """
name: bench-test
title: Bench test
sides:
  - {key: gov, label: Government, stance: for}
  - {key: opp, label: Opposition, stance: against}
seats:
  - {key: pm, role: debater, label: Prime Minister, side: gov}
  - {key: lo, role: debater, label: Leader of the Opposition, side: opp}
  - {key: dlo, role: debater, label: Deputy Leader, side: opp}
stages:
  - {speech: pm_first, seat: pm, prompt: "Open the case for: {topic}"}
  - {speech: offer, seat: [lo, dlo], at_once: true, answer: [offer, pass], prompt: "Rise on a point, or pass."}
  - speech: reply
    seat: pm
    answer: [accept, decline]
    when: {step: offer, answer: offer}
    prompt: "Offers: {others_offer} Accept or decline?"
  - speech: poi
    seat: [lo, dlo]
    by: {step: offer, answer: offer}
    when: {step: reply, answer: accept}
    prompt: "Make your point to {pm}, {speaker}."
  - {speech: pm_second, seat: pm, sees: all, prompt: "Finish your speech."}
"""


def seated(answers: dict[tuple[str, str], str]):
    """Replies for the driver: each seat's answer to each answering step."""

    def reply(step):
        if step.json_schema is None:
            return f"<{step.seat} {step.step}>", {}
        data = {"reasoning": f"{step.seat} reasons", "answer": answers[(step.seat, step.step)]}
        return json.dumps(data), {**data, "answer_kind": "choice"}

    return reply


@pytest.mark.parametrize(
    ("answers", "ran"),
    [
        ({"lo": "pass", "dlo": "pass"}, [("lo", "offer"), ("dlo", "offer")]),
        (
            {"lo": "pass", "dlo": "offer", "pm": "accept"},
            [*[("lo", "offer"), ("dlo", "offer")], *[("pm", "reply")], ("dlo", "poi")],
        ),
        (
            {"lo": "offer", "dlo": "offer", "pm": "accept"},
            [("lo", "offer"), ("dlo", "offer"), ("pm", "reply"), ("lo", "poi")],
        ),
        ({"lo": "offer", "dlo": "pass", "pm": "decline"}, [("lo", "offer"), ("dlo", "offer"), ("pm", "reply")]),
    ],
    ids=["nobody-rises", "the-deputy-rises", "both-rise-the-first-speaks", "declined"],
)
def test_the_point_is_made_by_whichever_seat_rose_first_and_only_by_one(answers, ran):
    card = parse_card(BENCH)
    choices = {(seat, "reply" if seat == "pm" else "offer"): answer for seat, answer in answers.items()}
    steps, waves, _, plan = run(card, config_for(card), reply=seated(choices))
    assert plan.finished
    called = [(s.seat, s.step) for s in steps if s.calls_llm]
    assert called == [("pm", "pm_first"), *ran, ("pm", "pm_second")]
    # The bench is asked at once: its two offers are one wave.
    assert [len(w) for w in waves if len(w) > 1] == [2]
    by_step = {s.step: s for s in steps}
    if "poi" in by_step:
        speaker = by_step["poi"].seat
        assert by_step["poi"].prompt == f"Make your point to Pm-name, {speaker.capitalize()}-name."
        # The speaker read every seat's answer before replying.
        assert by_step["reply"].prompt.startswith("Offers: Lo-name: lo reasons\n\nAnswer: ")
        assert "Dlo-name: dlo reasons" in by_step["reply"].prompt


def test_the_plan_shows_each_seats_turn_at_the_point_and_counts_one():
    card = parse_card(BENCH)
    plan = {(c.seat, c.step): c.when for c in card.plan({})}
    assert plan[("pm", "reply")] == "only if the answer to \"offer\" is 'offer'"
    assert plan[("lo", "poi")] == (
        "only if the answer to \"reply\" is 'accept', "
        "by Leader of the Opposition if the first of them to answer 'offer' to \"offer\""
    )
    assert plan[("dlo", "poi")].endswith("by Deputy Leader if the first of them to answer 'offer' to \"offer\"")
    # pm_first, two offers, reply, one point, pm_second: one seat's point counts, not two.
    assert (card.fewest_calls({}), card.calls({})) == (4, 6)
    assert "4 to 6 calls, 6 public statements" in protocol_markdown(card)


def test_a_speech_by_the_first_to_answer_cannot_be_given_at_once_and_reads_a_speech_with_choices():
    text = BENCH.replace(
        "    by: {step: offer, answer: offer}\n", "    by: {step: offer, answer: offer}\n    at_once: true\n"
    )
    assert [(p.field, p.message) for p in problems_of(text)] == [
        ("stages[4].by", "A speech by the first seat to answer is one speech: it cannot be given at once.")
    ]
    text = BENCH.replace("by: {step: offer, answer: offer}", "by: {step: pm_first, answer: offer}")
    assert [p.field for p in problems_of(text)] == ["stages[4].by.step"]
