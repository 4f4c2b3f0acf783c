"""Protocols that decide, as cards (docs/cards.md, "Deciding"): speeches given at once, answers, stop conditions
and decision rules. Each test drives a card with the pure driver (no database), replying as a model would, and
reads what every seat was asked and what it could see."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from debates.formats.base import DebateConfig, SeatInfo
from debates.formats.card import CardError, parse_card
from debates.formats.card.decide import Vote, agrees, decide, key
from debates.formats.card.doc import protocol_markdown
from tests.debates.formats.test_card_equivalence import run

CARDS = Path(__file__).resolve().parents[3] / "cards"


def load(name: str):
    return parse_card((CARDS / f"{name}.yaml").read_text())


def config(card, topic="What is 2+3*4?", options=None, material="", seats=None):
    keys = seats or [s.key for s in card.seat_specs if s.required]
    return DebateConfig(
        format=card.name,
        topic=topic,
        material=material,
        options=options or {},
        seats=tuple(SeatInfo(k, "debater", k.replace("_", " ").title(), "", f"You are {k}.") for k in keys),
    )


def answering(answers, checks=None):
    """A reply function: each seat's answer by (seat, round) from `answers` (a callable or dict), and each
    check's verdict by round from `checks`."""

    def reply(step):
        schema = step.json_schema
        assert schema is not None, step.step
        if "done" in schema["properties"]:
            data = {"done": bool(checks and checks(step.data["round"])), "reasoning": f"check {step.data['round']}"}
        else:
            value = answers(step.seat, step.data.get("round", 0))
            data = {"reasoning": f"{step.seat} thinks", "answer": value}
        jsonschema.validate(data, schema)
        return json.dumps(data), data

    return reply


def calls(steps):
    return [(s.seat, s.step, s.data.get("round", 0)) for s in steps if s.calls_llm]


# --- speeches given at once ------------------------------------------------------------------------------------------


def test_du_et_al_agents_answer_at_once_then_each_reads_only_the_others_previous_answers():
    card = load("multi-agent-debate")
    cfg = config(card, options={"rounds": 2})
    steps, waves, _records, plan = run(card, cfg, reply=answering(lambda seat, r: f"{seat[-1]}{r}"))
    # Three agents, three rounds of three calls, each round one wave: a round costs one call's latency.
    assert [len(w) for w in waves if w] == [3, 3, 3]
    assert calls(steps) == [(f"agent_{n}", "answer", r) for r in (0, 1, 2) for n in (1, 2, 3)]
    second = next(s for s in steps if s.seat == "agent_2" and s.data.get("round") == 1)
    assert second.prompt == (
        "These are the recent opinions from other agents:\n\n"
        "Agent 1: agent_1 thinks\n\nAnswer: 10\n\n"
        "Agent 3: agent_3 thinks\n\nAnswer: 30\n\n"
        "Use these opinions carefully as additional advice: can you provide an updated answer to the question? "
        "What is 2+3*4?\nMake sure to state your answer at the end of the response. "
        'Reply with JSON only: {"reasoning": "your reasoning", "answer": a short answer}'
    )
    # Its own chat: its persona, its first answer, then the prompt; nothing of round 1's other answers.
    assert [m["role"] for m in second.messages] == ["system", "user", "assistant", "user"]
    assert "Answer: 11" not in second.prompt and "Answer: 31" not in second.prompt
    assert plan.finished


def test_speeches_given_at_once_see_nothing_said_after_the_first_of_them_began():
    card = parse_card(
        """
name: table
title: Table
seats: [{key: a}, {key: b}, {key: c}]
stages:
  - speech: opening
    seat: a
    prompt: Open.
  - speech: view
    seat: [a, b, c]
    at_once: true
    sees: all
    prompt: "Your view, having heard {previous_speaker}."
"""
    )
    cfg = config(card, seats=["a", "b", "c"])
    steps, waves, _records, _ = run(card, cfg, reply=lambda s: (f"<{s.seat} {s.step}>", {}))
    assert [w for w in waves if w] == [[1], [2, 3, 4]]
    c_view = next(s for s in steps if s.seat == "c" and s.step == "view")
    heard = "\n".join(m["content"] for m in c_view.messages)
    assert "A: <a opening>" in heard
    assert "<a view>" not in heard and "<b view>" not in heard
    assert c_view.prompt == "Your view, having heard A."


# --- answers ---------------------------------------------------------------------------------------------------------


def test_an_answer_is_asked_as_json_with_its_kind_and_an_invalid_one_is_an_abstention_said_as_such():
    card = load("self-consistency")
    cfg = config(card, seats=["agent_1", "agent_2", "agent_3"])
    plan = card.next_steps(cfg, [])
    steps = [s for s in plan.steps if s.calls_llm]
    assert [s.seat for s in steps] == ["agent_1", "agent_2", "agent_3"]
    schema = steps[0].json_schema
    assert schema["properties"]["answer"] == {"type": "string", "minLength": 1, "maxLength": 200}
    assert steps[0].json_fallback and steps[0].word_limit is None
    answers = {"agent_1": "14", "agent_2": None, "agent_3": "14.0"}

    def reply(step):
        if answers[step.seat] is None:
            return "I cannot say", {"fallback": True}
        data = {"reasoning": "2 + 12", "answer": answers[step.seat]}
        return json.dumps(data), data

    _, _, records, plan = run(card, cfg, reply=reply)
    line = next(r for r in records if r.step == "decision")
    # Agent 2's reply was no valid answer: an abstention the decision names, not one it counts silently.
    assert line.content == (
        "Decision by plurality vote: 14 (2 votes of 3 voters). 14: 2. Agent 2 gave no valid answer, counted as an "
        "abstention."
    )
    assert line.data["decision"] == {
        "rule": "plurality",
        "answer": "14",
        "split": [["14", 2.0]],
        "voters": 3,
        "reason": "2 votes of 3 voters",
        "invalid": ["Agent 2"],
    }
    assert card.outcome(cfg, records)["announcement"] == line.content
    assert card.decision(records)["answer"] == "14"


def test_choices_enumerate_in_the_schema_and_the_answer_format():
    card = load("chateval")
    cfg = config(card, seats=["referee_1", "referee_2", "referee_3"], material="Q: 2+2? Answer 1: 4. Answer 2: 5.")
    steps, waves, records, _plan = run(
        card,
        cfg,
        reply=lambda s: (
            answering(lambda seat, r: "Answer 1" if seat != "referee_3" else "Answer 2")(s)
            if s.json_schema
            else (f"<{s.seat} {s.step} {s.data.get('round', 0) if s.data else 0}>", {})
        ),
    )
    verdicts = [s for s in steps if s.step == "verdict"]
    assert verdicts[0].json_schema["properties"]["answer"]["enum"] == ["Answer 1", "Answer 2", "Tie"]
    assert verdicts[0].prompt.endswith('"answer": one of "Answer 1", "Answer 2", "Tie"}')
    assert [w for w in waves if w][-1] == [s.ordinal for s in verdicts]  # the three verdicts at once
    # The discussion, one by one, each referee hearing the ones before; the material in each prompt.
    assert [s.seat for s in steps if s.step == "discussion"] == ["referee_1", "referee_2", "referee_3"] * 2
    assert "Q: 2+2? Answer 1: 4. Answer 2: 5." in next(s for s in steps if s.calls_llm).prompt
    assert next(r for r in records if r.step == "decision").content == (
        "Decision by majority vote: Answer 1 (2 of 3 votes, more than half). Answer 1: 2; Answer 2: 1"
    )


# --- stop conditions -------------------------------------------------------------------------------------------------

AGREE = """
name: agree
title: Agree
options:
  rounds: {default: 4, min: 1, max: 6}
seats: [{key: a}, {key: b}, {key: c}]
stages:
  - repeat: rounds
    until: {agree: all}
    stages:
      - speech: answer
        seat: [a, b, c]
        at_once: true
        answer: number
        prompt: "Round {round}. {others_answer} {answer_format}"
        first: {prompt: "Round 1. {answer_format}"}
decision: {rule: plurality}
"""


def test_a_repeat_stops_at_the_first_round_whose_answers_agree_and_never_calls_past_it():
    card = parse_card(AGREE)
    cfg = config(card, seats=["a", "b", "c"])
    # Round 1: 1, 2, 2; round 2: 2, 2, 2 (all agree); rounds 3 and 4 must never be asked.
    table = {("a", 1): 1, ("b", 1): 2, ("c", 1): 2}
    steps, _waves, records, plan = run(card, cfg, reply=answering(lambda seat, r: table.get((seat, r), 2)))
    assert {r for _, _, r in calls(steps)} == {1, 2}
    assert len([s for s in steps if s.calls_llm]) == 6
    stop = next(r for r in records if r.step == "stop")
    assert stop.content == "3 of 3 answers agree after round 2 of 4 (2): the rounds stop."
    assert stop.data == {"check": "stop", "round": 2, "rounds": 4}
    assert [r.step for r in sorted(records, key=lambda r: r.ordinal)][-2:] == ["stop", "decision"]
    assert plan.finished
    assert (card.fewest_calls({}), card.calls({})) == (3, 12)


def test_a_stopped_debate_resumed_from_any_point_plans_what_its_first_run_did():
    card = parse_card(AGREE)
    cfg = config(card, seats=["a", "b", "c"])
    table = {("a", 1): 1}
    reply = answering(lambda seat, r: table.get((seat, r), 2))
    _, _, whole, _ = run(card, cfg, reply=reply)
    ordered = sorted(whole, key=lambda r: r.ordinal)
    for cut in range(len(ordered)):
        # A run killed after `cut` events (mid-round included) resumes to the same transcript.
        _, _, resumed, plan = run(card, cfg, records=ordered[:cut], reply=reply)
        assert [(r.ordinal, r.step, r.content) for r in sorted(resumed, key=lambda r: r.ordinal)] == [
            (r.ordinal, r.step, r.content) for r in ordered
        ]
        assert plan.finished


def test_mad_ends_when_the_moderator_finds_an_answer_and_the_moderator_decides():
    card = load("mad")
    cfg = config(card, topic="Is 91 prime?", seats=["affirmative", "negative", "moderator"])

    def reply(step):
        if step.json_schema is None:
            return f"<{step.seat} {step.step} {step.ordinal}>", {}
        if "done" in step.json_schema["properties"]:
            data = {"done": step.data["round"] == 2, "reasoning": "The negative shows 91 = 7 x 13."}
        else:
            data = {"reasoning": "91 = 7 x 13", "answer": "No"}
        return json.dumps(data), data

    steps, _, records, plan = run(card, cfg, reply=reply)
    assert [(s.seat, s.step) for s in steps if s.calls_llm] == [
        ("affirmative", "affirmative_argument"),
        ("negative", "negative_argument"),
        ("moderator", "stop_check"),
        ("affirmative", "affirmative_argument"),
        ("negative", "negative_argument"),
        ("moderator", "stop_check"),
        ("moderator", "final_answer"),
    ]
    check = [s for s in steps if s.step == "stop_check"][1]
    assert "Now round 2 of the debate for both sides has ended." in check.prompt
    assert "Negative side arguing: <negative negative_argument 6>" in check.prompt
    stop = next(r for r in records if r.step == "stop")
    assert stop.content == (
        "Moderator finds the question settled after round 2 of 3: the rounds stop. The negative shows 91 = 7 x 13."
    )
    decision = next(r for r in records if r.step == "decision")
    assert decision.data["decision"]["answer"] == "No"
    assert decision.content == "Decision by the judge's answer: No (Moderator's answer). No: 1"
    assert (card.fewest_calls({}), card.calls({})) == (4, 9)
    assert plan.finished


def test_a_check_replied_with_invalid_json_does_not_stop_the_rounds():
    card = load("mad")
    cfg = config(card, seats=["affirmative", "negative", "moderator"])

    def reply(step):
        if step.json_schema is None:
            return "said", {}
        if "done" in step.json_schema["properties"]:
            return '{"done": tru', {"fallback": True}
        data = {"reasoning": "r", "answer": "x"}
        return json.dumps(data), data

    steps, _, records, _ = run(card, cfg, reply=reply)
    assert sum(s.step == "affirmative_argument" for s in steps) == 3
    assert not any(r.step == "stop" for r in records)


# --- problems a card is refused for ----------------------------------------------------------------------------------


def problems(text):
    with pytest.raises(CardError) as raised:
        parse_card(text)
    return [(p.field, p.message) for p in raised.value.problems]


BASE = """
name: x
title: X
seats: [{key: a}, {key: b}, {key: judge, role: judge}]
stages:
"""


def test_a_card_that_cannot_decide_is_refused_with_every_problem_at_once():
    found = problems(
        BASE
        + """
  - speech: view
    seat: [a, b]
    at_once: true
    system: "[SYSTEM]: Views."
    prompt: "{answer_format} {others_nothing}"
  - repeat: 3
    until: {agree: all}
    stages:
      - speech: talk
        seat: a
        prompt: Talk.
decision: {rule: mean}
"""
    )
    assert (
        "stages[1].at_once",
        "Speeches given at once have no system line of their own: put one before them.",
    ) in found
    assert (
        "stages[1].prompt",
        "{answer_format} tells a speech how to give its answer, so it is known only in a speech with 'answer'.",
    ) in found
    assert (
        "stages[1].prompt",
        "{others_nothing} reads the step 'nothing', but no stage of the card is called that.",
    ) in found
    assert ("stages[2].until.agree", "The answers must agree, but no speech in this repeat gives an answer.") in found
    assert ("decision.rule", "A decision counts answers, but no speech of the card gives one.") in found


def test_a_rule_is_refused_for_answers_of_a_kind_it_cannot_count():
    found = problems(
        BASE
        + """
  - speech: pick
    seat: [a, b]
    at_once: true
    answer: [yes, no]
    prompt: "Pick. {answer_format}"
decision: {rule: borda}
"""
    )
    assert found == [("decision.rule", "The rule 'borda' counts answers of the kind ranking; 'pick' gives choice.")]


def test_a_seat_named_like_a_later_placeholder_keeps_its_meaning():
    """`material` came after cards were saved: a card with a seat of that key still reads, {material} its name."""
    card = parse_card(
        """
name: m
title: M
seats: [{key: material}, {key: b}]
stages:
  - speech: s
    seat: b
    prompt: "Answer {material}."
"""
    )
    cfg = DebateConfig(
        format="m",
        topic="t",
        material="a passage",
        seats=(SeatInfo("material", "debater", "Mo"), SeatInfo("b", "debater", "Bo")),
    )
    step = next(s for s in card.next_steps(cfg, []).steps if s.calls_llm)
    assert step.prompt == "Answer Mo."


# --- referees: judge seats that each name a side, decided by a rule ---

REFEREES = """
name: referees
title: Referees
sides:
  - {key: pro, label: Proposition, stance: for}
  - {key: con, label: Opposition, stance: against}
seats:
  - {key: a, side: pro}
  - {key: b, side: con}
  - {key: r1, role: judge}
  - {key: r2, role: judge}
  - {key: r3, role: judge, required: false}
stages:
  - {speech: case, seat: a, prompt: "Argue for: {topic}"}
  - {speech: case, seat: b, prompt: "Argue against: {topic}"}
  - {speech: ballot, seat: [r1, r2, r3], at_once: true, sees: all, answer: side, prompt: "Who won? {answer_format}"}
decision: {rule: majority}
"""


def referee_config(card, keys=("a", "b", "r1", "r2", "r3"), premise="Cities should ban cars"):
    names = {"a": "Ann", "b": "Ben", "r1": "Una", "r2": "Vic", "r3": "Wes"}
    roles = {s.key: s.role for s in card.seat_specs}
    return DebateConfig(
        format=card.name,
        topic="Ban cars?",
        premise=premise,
        options={},
        seats=tuple(SeatInfo(k, roles[k], names[k], "", f"You are {names[k]}.") for k in keys),
    )


def referees_reply(named):
    """Speeches in words; each referee's ballot the side `named(seat)`."""
    ballot = answering(lambda seat, r: named(seat))
    return lambda step: ballot(step) if step.json_schema else (f"{step.seat} argues.", {})


def test_referees_each_name_a_side_by_its_speakers_name_and_their_decision_is_the_winner():
    card = parse_card(REFEREES)
    # Judged inside the debate by its referees, in seat order (a tournament seats its judges there).
    assert (card.judging, card.judge_seat, card.referee_seats) == ("referees", None, ("r1", "r2", "r3"))
    page = protocol_markdown(card)
    assert "judged by its referees' decision, each naming a side" in page
    assert "| 3 | R1 | speech with an answer (the name of one side) | ballot |" in page
    cfg = referee_config(card)
    steps, waves, records, _plan = run(card, cfg, reply=referees_reply(lambda seat: "Ben" if seat == "r1" else "Ann"))
    ballots = [s for s in steps if s.step == "ballot"]
    assert [s.seat for s in ballots] == ["r1", "r2", "r3"] and [w for w in waves if w][-1] == [
        s.ordinal for s in ballots
    ]
    assert ballots[0].json_schema["properties"]["answer"] == {"type": "string", "enum": ["Ann", "Ben"]}
    assert ballots[0].prompt.endswith(
        'Who won? Reply with JSON only: {"reasoning": "your reasoning", "answer": one of "Ann", "Ben"}'
    )
    line = next(r for r in records if r.step == "decision")
    assert line.content == "Decision by majority vote: Ann (2 of 3 votes, more than half). Ann: 2; Ben: 1"
    assert card.outcome(cfg, records) == {
        "winner": "Ann",
        "scores": {},
        "premise_upheld": True,
        "announcement": line.content,
    }
    assert [(v.seat, v.name, v.answer) for v in card.votes(cfg, records)] == [
        ("r1", "Una", "Ben"),
        ("r2", "Vic", "Ann"),
        ("r3", "Wes", "Ann"),
    ]


def test_a_side_answer_is_given_by_the_sides_verdict_words_and_decides_the_side_that_wins():
    # A mock trial's bench answers "Guilty" or "Not guilty", as the protocol says it, not "Prosecution" or
    # "Defence"; the decided word's side is the winner, for the verdict box, ratings and tournaments.
    card = parse_card(
        REFEREES.replace("label: Proposition, stance: for}", "label: Prosecution, stance: for, verdict: Guilty}")
        .replace("label: Opposition, stance: against}", "label: Defence, stance: against, verdict: Not guilty}")
        .replace("name: referees", "name: trial")
    )
    cfg = referee_config(card)
    vote = lambda seat: "Guilty" if seat == "r1" else "Not guilty"  # noqa: E731
    steps, _waves, records, _plan = run(card, cfg, reply=referees_reply(vote))
    ballot = next(s for s in steps if s.step == "ballot")
    assert ballot.json_schema["properties"]["answer"] == {"type": "string", "enum": ["Guilty", "Not guilty"]}
    assert ballot.prompt.endswith('"answer": one of "Guilty", "Not guilty"}')
    line = next(r for r in records if r.step == "decision")
    assert line.content.startswith("Decision by majority vote: Not guilty (2 of 3 votes")
    assert (card.outcome(cfg, records)["winner"], card.outcome(cfg, records)["premise_upheld"]) == ("Ben", False)
    assert problems(
        REFEREES.replace("stance: for}", "stance: for, verdict: Guilty}").replace(
            "stance: against}", "stance: against, verdict: guilty}"
        )
    ) == [("sides[2].verdict", "Two sides' verdicts are 'guilty': each side needs a word of its own.")]


def test_referees_who_split_evenly_name_no_winner():
    card = parse_card(REFEREES)
    cfg = referee_config(card, keys=("a", "b", "r1", "r2"))  # the third referee's seat is optional
    _steps, _waves, records, _plan = run(card, cfg, reply=referees_reply(lambda seat: "Ben" if seat == "r1" else "Ann"))
    outcome = card.outcome(cfg, records)
    assert (outcome["winner"], outcome["premise_upheld"]) == ("", None)
    assert (
        outcome["announcement"]
        == "Decision by majority vote: no decision (no answer has more than half of 2). Ben: 1; Ann: 1"
    )


def test_an_answer_naming_a_side_needs_sides():
    found = problems(
        BASE
        + """
  - {speech: ballot, seat: judge, answer: side, prompt: "Who won? {answer_format}"}
decision: {rule: plurality}
"""
    )
    assert found == [("stages[1].answer", "An answer 'side' names one of the card's sides, so it needs two or more.")]


# --- decision rules, against counts done by hand ---


def votes(*answers):
    return [Vote(f"s{n}", f"S{n}", a) for n, a in enumerate(answers)]


def test_plurality_majority_and_unanimity():
    assert decide("plurality", votes("a", "b", "b", None)).answer == "b"
    assert decide("plurality", votes("a", "b")).answer is None
    assert decide("plurality", votes("a", "b"), tie="first").answer == "a"
    # Majority needs more than half of the voters, abstentions included: 2 of 4 is not.
    assert decide("majority", votes("a", "a", "b", None)).answer is None
    assert decide("majority", votes("a", "a", "b")).answer == "a"
    assert decide("unanimity", votes(3, 3.0, 3)).answer == 3
    assert decide("unanimity", votes(3, 3, None)).answer is None


def test_approval_borda_and_mean():
    approvals = decide("approval", votes(["A", "B"], ["B"], ["C", "B"]), choices=["A", "B", "C"])
    assert approvals.answer == "B" and dict(approvals.split) == {"B": 3, "A": 1, "C": 1}
    # Borda with 3 choices: first 2 points, second 1, last 0. A: 2+0+1=3, B: 1+2+2=5, C: 0+1+0=1.
    borda = decide("borda", votes(["A", "B", "C"], ["B", "C", "A"], ["B", "A", "C"]), choices=["A", "B", "C"])
    assert borda.answer == "B" and dict(borda.split) == {"A": 3, "B": 5, "C": 1}
    assert decide("mean", votes(1, 2, 6, None)).answer == 3


def test_answers_agree_by_value_and_by_normalised_text():
    assert key("The Eiffel Tower.") == key("eiffel tower")
    assert key("4.5") == key(4.5) != key("45")
    assert key("1,234") == key(1234)
    assert agrees(["x", "x", "y"], 0.6) and not agrees(["x", "x", "y"], 1.0)
    assert not agrees(["x", None], 1.0)


def test_agreement_over_one_answer_a_round_is_refused():
    # A list of seats (a seat group included) in a repeat speaks one speech a round: the first round's one
    # answer would always agree with itself and stop the rounds. Two seats speaking each round may agree.
    turns = """
  - repeat: 4
    until: {agree: all, step: lean}
    stages:
      - speech: lean
        seat: [a, b]
        answer: [yes, no]
        prompt: "Lean. {answer_format}"
"""
    assert problems(BASE + turns) == [
        (
            "stages[1].until.agree",
            "The answers of 'lean' cannot agree: a round gives one of them (a list of seats speaks one speech a "
            "round, by the next seat in turn). For every seat to answer in every round, give the speech "
            "'at_once: true', or each seat a speech of its own in the repeat.",
        )
    ]
    parse_card(BASE + turns.replace("seat: [a, b]", "seat: [a, b]\n        at_once: true"))
    each = turns.split("      - speech")[0]
    for seat in ("a", "b"):
        each += f'      - speech: lean\n        seat: {seat}\n        answer: [yes, no]\n        prompt: "Lean."\n'
    parse_card(BASE + each)


def test_the_plan_says_what_speeches_given_at_once_read_and_see():
    plan = load("multi-agent-debate").plan({"rounds": 1})
    # {others_answer}: every other agent's answer of the round before, not the latest alone.
    assert [c.reads for c in plan if c.round == 1][:3] == [
        ("answer (Agent 2)", "answer (Agent 3)"),
        ("answer (Agent 1)", "answer (Agent 3)"),
        ("answer (Agent 1)", "answer (Agent 2)"),
    ]
    verdicts = [c for c in load("chateval").plan({}) if c.step == "verdict"]
    assert {c.sees for c in verdicts} == {"every public statement so far, before the speeches given at once with it"}


def test_the_protocol_page_gives_word_limits_the_judges_marks_and_the_sides_verdict_words():
    page = protocol_markdown(load("world-schools"))
    assert "| 7 | First Proposition | speech, at most 500 words | first Proposition |" in page
    assert (
        "The judge marks each side in its verdict by: Content (0 to 40), Style (0 to 40), Strategy (0 to 20)." in page
    )
    trial = parse_card(
        """
name: trial
title: Trial
sides:
  - {key: pros, label: Prosecution, stance: for, verdict: Guilty}
  - {key: defence, label: Defence, stance: against, verdict: Not guilty}
seats: [{key: p, side: pros}, {key: d, side: defence}, {key: bench, role: judge}]
stages:
  - {speech: case, seat: p, prompt: "Make the case."}
  - {speech: answer_case, seat: d, prompt: "Answer it."}
  - {speech: verdict, seat: bench, answer: side, prompt: "Decide. {answer_format}"}
decision: {rule: judge, seat: bench, step: verdict}
"""
    )
    page = protocol_markdown(trial)
    assert "| side | label | stance | seats | its win is called |" in page
    assert "| `defence` | Defence | against | `d` | Not guilty |" in page
    assert "its win is called" not in protocol_markdown(load("world-schools"))
