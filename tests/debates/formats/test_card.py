"""The card language (docs/cards.md): every problem of a bad card at once, each with its line and field; what
each seat of a card's debate is asked and sees; cross-examination, rounds, an early end, people in seats, and
the verdicts, with the pure driver of test_card_equivalence (no database, no LLM)."""

import json
import random
from pathlib import Path

import jsonschema
import pytest
import yaml

from chaoslm.llm import ChatOptions, Endpoint, Policy, chat
from debates.formats import DebateConfig, Record, SeatInfo
from debates.formats.card import CardCaps, CardError, card_format, parse_card
from debates.formats.card.doc import protocol_markdown
from debates.formats.card.template import TemplateError, parse_template
from tests.debates.formats.test_card_equivalence import run

CARDS = Path(__file__).resolve().parents[3] / "cards"
SHIPPED = sorted(p.stem for p in CARDS.glob("*.yaml"))


def load(name):
    return parse_card((CARDS / f"{name}.yaml").read_text())


def seats_for(card, human=()):
    return tuple(
        SeatInfo(s.key, s.role, f"{s.key.capitalize()}-name", s.side, f"{s.key} persona", s.key in human)
        for s in card.seat_specs
    )


def config_for(card, options=None, premise="", is_ending=False, human=()):
    return DebateConfig(
        format=card.name,
        topic="School uniforms",
        premise=premise,
        options=options or {},
        seats=seats_for(card, human),
        is_ending=is_ending,
    )


def reply(step):
    """A reply every step accepts: valid JSON where a schema asks for it, else a marker naming the step."""
    schema = step.json_schema
    if schema is None:
        return f"<{step.seat} {step.step} {step.ordinal}>", {}
    if "answer" in schema["properties"]:  # a speech's answer: the first value its kind allows
        answer = schema["properties"]["answer"]
        value = {"number": 4, "string": answer.get("enum", ["four"])[0]}.get(answer["type"])
        if answer["type"] == "array":
            value = answer["items"]["enum"][: answer["minItems"]]
        data = {"reasoning": f"{step.seat} reasons", "answer": value}
    elif "done" in schema["properties"]:  # a check after a round: not done, so every round runs
        data = {"done": False, "reasoning": "not yet"}
    elif "score" in schema["properties"]:
        data = {"score": 6, "reasoning": "fine"}
        if "marks" in schema["properties"]:  # a speaker marked on a rubric too
            data["marks"] = {k: 1 for k in schema["properties"]["marks"]["properties"]}
    else:
        scores = schema["properties"]["scores"]["properties"]
        score = lambda s: {k: 5 for k in s["properties"]} if s["type"] == "object" else 5  # noqa: E731
        data = {"scores": {name: score(s) for name, s in scores.items()}}
        if "ranking" in schema["properties"]:
            data["ranking"] = list(reversed(schema["properties"]["ranking"]["items"]["enum"]))
        else:
            data["winner"] = schema["properties"]["winner"]["enum"][0]
    jsonschema.validate(data, schema)
    return json.dumps(data), data


def problems_of(text, caps=None):
    with pytest.raises(CardError) as raised:
        parse_card(text, caps)
    return raised.value.problems


# -- a bad card never reaches a debate ------------------------------------------------------------------------
BAD = """\
name: Bad Card
title: Broken
options:
  rounds: {label: Rounds, default: 9, min: 1, max: 5}
  turns: {label: Turns, default: 3, min: 4, max: 2}
  turns: {label: again, default: 1, min: 1, max: 2}
sides:
  - {key: for, stance: for}
  - {key: against, stance: against}
seats:
  - {key: a, role: debater, side: for}
  - {key: b, role: debater, side: against}
  - {key: judge, role: judge}
stages:
  - speech: opening
    seat: a
    prompt: "Argue {topic} against {oponent}."
  - speech: reply
    seat: c
    promt: "typo"
    prompt: "Answer {b}."
  - speech: rebuttal
    seat: b
    prompt: "They will close with {last_closing}; you are in round {round}."
  - speech: closing
    seat: a
    prompt: "Close on {previous}, {topic.__class__}"
judge:
  seat: judge
"""


def test_a_bad_card_reports_every_problem_at_once_each_with_its_line_and_field():
    found = {(p.line, p.field): p.message for p in problems_of(BAD)}
    assert set(found) == {
        (1, "name"),
        (4, "options.rounds.default"),
        (5, "options.turns.min"),
        (6, "options.turns"),
        (17, "stages[1].prompt"),
        (19, "stages[2].seat"),
        (20, "stages[2].promt"),
        (24, "stages[3].prompt"),
        (27, "stages[4].prompt"),
        (29, "judge.seat"),
    }
    assert "not a valid name" in found[(1, "name")]
    assert found[(4, "options.rounds.default")] == "The default (9) must be from 1 to 5."
    assert found[(5, "options.turns.min")] == "The minimum (4) is above the maximum (2)."
    assert found[(6, "options.turns")] == "'turns' is given twice (first on line 5)."
    assert found[(17, "stages[1].prompt")].startswith("Unknown placeholder {oponent}.")
    assert found[(19, "stages[2].seat")] == "There is no seat called 'c'; the seats are a, b, judge."
    assert found[(20, "stages[2].promt")].startswith("Unknown field 'promt'")
    assert found[(27, "stages[4].prompt")].startswith("'{topic.__class__}' is not a placeholder")
    assert found[(29, "judge.seat")] == "The judge has nothing to judge: give it 'score', 'verdict' or both."


def test_a_step_no_stage_gives_is_said_once_and_a_bad_brace_is_quoted_to_its_close():
    card = """
name: x
title: X
seats: [{key: a}, {key: b}]
stages:
  - {speech: open, seat: a, prompt: "Open on {last_nothing}."}
  - {speech: reply, seat: b, prompt: "Reply to {topic.upper} {turn:>3}."}
"""
    assert [(p.line, p.field, p.message) for p in problems_of(card)] == [
        (6, "stages[1].prompt", "{last_nothing} reads the step 'nothing', but no stage of the card is called that."),
        (
            7,
            "stages[2].prompt",
            "'{topic.upper}' is not a placeholder: write a name in braces such as {topic} (lower case letters, "
            "digits and _ only), and {{ or }} for a literal brace.",
        ),
    ]


def test_seat_names_the_acting_seats_label_and_a_seat_called_seat_keeps_its_name():
    card = parse_card(
        """
name: bp
title: BP
sides: [{key: gov, label: Government, stance: for}, {key: opp, label: Opposition, stance: against}]
seats: [{key: pm, label: Prime Minister, side: gov}, {key: lo, label: Leader of the Opposition, side: opp}]
stages:
  - {speech: case, seat: pm, prompt: "You are the {seat} ({side})."}
  - {speech: reply, seat: lo, prompt: "As {seat}, answer {pm}."}
"""
    )
    steps, _, _, _ = run(card, config_for(card), reply=reply)
    assert [s.prompt for s in steps if s.calls_llm] == [
        "You are the Prime Minister (Government).",
        "As Leader of the Opposition, answer Pm-name.",
    ]
    named = parse_card(
        """
name: s
title: S
seats: [{key: seat, label: Chair}, {key: b}]
stages:
  - {speech: open, seat: b, prompt: "Thank {seat}."}
"""
    )
    steps, _, _, _ = run(named, config_for(named), reply=reply)
    assert [s.prompt for s in steps if s.calls_llm] == ["Thank Seat-name."]


ANGEL_DEVIL = """
name: angel-devil
title: Angel and devil
options:
  referees: {label: Referees, default: 3, min: 2, max: 3}
sides: [{key: aff, label: Affirmative, stance: for}, {key: neg, label: Negative, stance: against}]
seats:
  - {key: angel, side: aff, label: Angel}
  - {key: devil, side: neg, label: Devil}
  - {key: referee, role: judge, label: Referee, count: referees}
stages:
  - repeat: 2
    stages:
      - speech: argue
        seat: [angel, devil]
        at_once: true
        prompt:
          aff: "Round {round}. Defend: {topic}"
          devil: "Round {round}. Attack: {topic}. {others_argue}"
        first:
          prompt: {aff: "Open for: {topic}", other: "Open against: {topic}"}
  - speech: rule
    seat: referee
    at_once: true
    prompt:
      referee_1: "As the critic, weigh {last_argue}"
      referee: "As {seat}, weigh {last_argue}"
"""


def test_a_prompt_given_seat_by_seat_asks_each_seat_its_own_way_and_keeps_one_step():
    card = parse_card(ANGEL_DEVIL)
    steps, waves, _, _ = run(card, config_for(card), reply=reply)
    asked = [(s.seat, s.step, s.prompt) for s in steps if s.calls_llm]
    assert asked == [
        # The first round's variant is given seat by seat too.
        ("angel", "argue", "Open for: School uniforms"),
        ("devil", "argue", "Open against: School uniforms"),
        ("angel", "argue", "Round 2. Defend: School uniforms"),
        # One step for both seats: the devil reads the angel's round-1 speech as the others' argument.
        ("devil", "argue", "Round 2. Attack: School uniforms. Angel-name: <angel argue 1>"),
        # A seat's own key wins over its group's.
        ("referee_1", "rule", "As the critic, weigh <devil argue 4>"),
        ("referee_2", "rule", "As Referee 2, weigh <devil argue 4>"),
        ("referee_3", "rule", "As Referee 3, weigh <devil argue 4>"),
    ]
    # Still spoken at once: each round's two speeches, then the three referees, are one wave each.
    assert [len(w) for w in waves if w] == [2, 2, 3]
    page = protocol_markdown(card)
    assert "### argue (Angel)\n\n```text\nRound {round}. Defend: {topic}\n```" in page
    assert "### argue (Devil)\n\n```text\nRound {round}. Attack: {topic}. {others_argue}\n```" in page
    assert "### rule (Referee 2, Referee 3)\n\n```text\nAs {seat}, weigh {last_argue}\n```" in page


def test_a_prompt_given_seat_by_seat_must_ask_every_seat_and_only_the_speechs_seats():
    text = ANGEL_DEVIL.replace("          aff: ", "          zz: ").replace("      referee: ", "      other: ")
    assert [(p.field, p.message) for p in problems_of(text)] == [
        (
            "stages[1].stages[1].prompt",
            "No prompt for Angel (angel): give each seat a prompt by its key, its group's, its side's, or 'other'.",
        ),
        (
            "stages[1].stages[1].prompt.zz",
            "Unknown field 'zz'; the fields here are angel, aff, devil, neg, other.",
        ),
    ]


def test_reading_a_speech_not_yet_given_and_a_round_outside_a_repeat_are_both_reported():
    problems = [p for p in problems_of(BAD) if p.line == 24]
    assert sorted(p.message for p in problems) == [
        "{last_closing} reads a step not yet given: no such speech is given before this point.",
        "{round} is only known inside a repeat.",
    ]


def test_yaml_that_cannot_be_read_names_the_line_its_bracket_opened_and_the_rest_is_still_checked():
    assert problems_of("name: x\ntitle: ok\nstages:\n  - speech: a\n    seat: [a\n") == [
        (1, "seats", "'seats' is required and must list at least one entry."),
        (
            5,
            "",
            "The YAML cannot be read: while parsing a flow sequence (line 5), expected ',' or ']', but got "
            "'<stream end>'.",
        ),
    ]


UNREADABLE = """\
name: x
title: X
options:
  rounds: {label: Rounds, default: 9, min: 1, max: 5}
seats:
  - {key: pm}
  - {key: lo}
stages:
  - speech: open
    seat: pm
    prompt: "Open."
  - speech: reply
    seat: [lo
    prompt: "Reply."
  - speech: close
    seat: defnder
    sees: al
    prompt: "{last_reply} Close."
  - speech: after
    seat: lo
    prompt: "After."
    bad: [unclosed
"""


def test_an_unreadable_first_stage_holds_back_its_own_problems_not_those_of_the_tenth():
    stages = "".join(f"  - {{speech: s{n}, seat: a, prompt: hi}}\n" for n in range(2, 10))
    text = (
        "name: x\ntitle: X\nseats: [{key: a}]\nstages:\n  - speech: s1\n    seat: [a\n"
        + stages
        + "  - {speech: s10, seat: nobody, prompt: hi}\n"
    )
    assert [p.field for p in problems_of(text)] == ["", "stages[10].seat"]


def test_a_misspelled_field_is_told_the_field_it_was_likely_meant_to_be():
    text = "name: x\ntitle: X\nseats: [{key: a}]\nstages:\n  - {speech: s, seat: a, promt: hi, zzz: 1}\n"
    messages = [p.message for p in problems_of(text)]
    assert any(
        m.startswith("Unknown field 'promt' (did you mean 'prompt'?); the fields here are speech,") for m in messages
    )
    assert any(m.startswith("Unknown field 'zzz'; the fields here are") for m in messages)


def test_a_card_whose_yaml_cannot_be_read_whole_is_checked_part_by_part_every_problem_at_once():
    assert problems_of(UNREADABLE) == [
        (4, "options.rounds.default", "The default (9) must be from 1 to 5."),
        (
            13,
            "",
            "The YAML cannot be read: while parsing a flow sequence (line 13), expected ',' or ']', but got ':'.",
        ),
        (16, "stages[3].seat", "There is no seat called 'defnder'; the seats are lo, pm."),
        (17, "stages[3].sees", "'sees' must be one of own, all, last, none, not 'al'."),
        (
            22,
            "",
            "The YAML cannot be read: while parsing a flow sequence (line 22), expected ',' or ']', but got "
            "'<stream end>'.",
        ),
    ]
    # Nothing is said of what only the unreadable parts could settle: {last_reply} reads the stage that could
    # not be read, and without the seats no seat can be told missing.
    no_seats = "name: x\ntitle: X\nseats: [{key: a}\nstages:\n  - {speech: b, seat: zz, prompt: hi}\n"
    assert [p.field for p in problems_of(no_seats)] == [""]


def test_anchors_are_refused_rather_than_expanded():
    text = "name: x\ntitle: &t T\ndescription: *t\nseats: [{key: a}]\nstages: [{speech: s, seat: a, prompt: hi}]\n"
    assert [(p.line, p.field) for p in problems_of(text)] == [(3, "description")]


MINIMAL = """\
name: {name}
title: Small
options:
  rounds: {{default: 2, min: 1, max: {max_rounds}}}
seats:
  - {{key: a}}
  - {{key: b}}
stages:
  - repeat: rounds
    stages:
      - speech: talk
        seat: [a, b]
        prompt: "Round {{round}} of {{rounds}}."
"""


def test_a_card_over_the_owners_call_cap_is_refused_at_its_options_maximum():
    text = MINIMAL.format(name="small", max_rounds=60)
    assert [(p.field, p.message) for p in problems_of(text, CardCaps(max_calls=50))] == [
        ("stages", "The card makes 60 calls with every option at its maximum; the cap is 50.")
    ]
    assert parse_card(text, CardCaps(max_calls=60)).calls({"rounds": 60}) == 60


def test_previous_in_the_first_speech_is_a_speech_not_yet_given():
    text = MINIMAL.format(name="small", max_rounds=3).replace("of {rounds}", "after {previous}")
    assert [(p.line, p.field, p.message) for p in problems_of(text)] == [
        (13, "stages[1].stages[1].prompt", "{previous} reads the speech before this one, but none is given before it.")
    ]


def test_a_built_in_formats_name_is_refused_when_reserved():
    text = MINIMAL.format(name="duel", max_rounds=3)
    assert [p.field for p in problems_of(text, CardCaps(reserved=frozenset({"duel"})))] == ["name"]


def test_a_judge_with_no_debater_to_judge_is_refused():
    text = """\
name: chat
title: Chat
seats:
  - {key: m, role: moderator}
  - {key: j, role: judge}
stages:
  - speech: hello
    seat: m
    prompt: Hello.
judge:
  seat: j
  score:
    prompt: Score {scored}.
"""
    assert [(p.line, p.field, p.message) for p in problems_of(text)] == [
        (10, "judge", "The judge has nothing to judge: no debater speaks.")
    ]


def test_the_error_lists_one_problem_a_line():
    with pytest.raises(CardError) as raised:
        parse_card("name: x\n")
    error = str(raised.value)
    assert error.splitlines() == [
        "line 1: seats: 'seats' is required and must list at least one entry.",
        "line 1: stages: 'stages' is required and must list at least one entry.",
        "line 1: title: 'title' is required.",
    ]


@pytest.mark.parametrize(
    "source",
    ["{topic.__class__}", "{topic[0]}", "{0}", "{topic!r}", "{topic:>99}", "{__import__}", "{ topic }", "a } b"],
)
def test_a_template_is_names_in_braces_and_nothing_else(source):
    with pytest.raises(TemplateError):
        parse_template(source)


def test_values_are_never_read_as_templates():
    template = parse_template("{{literal}} {topic}{if premise} on {premise}{end}.")
    assert template.names == {"topic", "premise"}
    assert template.render({"topic": "{premise.__class__}", "premise": ""}) == "{literal} {premise.__class__}."
    assert template.render({"topic": "T", "premise": "P"}) == "{literal} T on P."


# -- the shipped cards ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SHIPPED)
def test_each_shipped_card_runs_to_the_end_and_its_counts_are_its_runs(name):
    card = load(name)
    config = config_for(card, premise="Schools should require uniforms")
    steps, _, records, plan = run(card, config, reply=reply)
    assert plan.finished
    calls = [s for s in steps if s.calls_llm]
    assert len(calls) == card.calls({})
    roles = {s.key: s.role for s in card.seat_specs}
    assert sum(1 for s in calls if s.kind == "TURN" and roles[s.seat] == "debater") == card.statements({})
    assert len({s.ordinal for s in steps}) == len(steps)
    for step in steps:
        assert card.step_label(step.step) is not None
    if card.judging == "in_debate":
        outcome = card.outcome(config, records)
        assert outcome["winner"] in card.verdict_names(config)


@pytest.mark.parametrize("name", SHIPPED)
def test_no_seat_ever_sees_another_seats_private_steps(name):
    card = load(name)
    steps, _, records, _ = run(card, config_for(card), reply=reply)
    private = [r for r in records if r.visibility == "private" and r.kind != "HEADER"]
    # Cards whose every step is public: nothing private to leak.
    open_cards = ("classic-card", "oxford-style", "chateval", "multi-agent-debate", "self-consistency", "single-agent")
    assert private or name in open_cards
    for step in steps:
        text = json.dumps(step.messages)
        for record in private:
            if record.seat != step.seat:
                assert record.content not in text, (step.ordinal, record.ordinal)


LD_NEG_QUESTION_2 = """The resolution is: School uniforms

Cross-examination: you, Neg-name, question Aff-name about the affirmative constructive:

"<aff affirmative_constructive 3>"

Earlier you asked: "<neg neg_question_1 4>"
They answered: "<aff aff_answer_1 5>"

Ask one short, pointed question that sets up your own case or exposes a weakness in theirs.
Give only the question."""

LD_AFF_ANSWER_2 = """Cross-examination: Neg-name asks you:

"<neg neg_question_2 6>"

Answer directly and briefly, defending your case. Give only the answer."""


def test_lincoln_douglas_cross_examination_alternates_question_and_answer_with_exact_prompts():
    card = load("lincoln-douglas")
    steps, _, _, _ = run(card, config_for(card, {"questions": 2}), reply=reply)
    calls = [(s.seat, s.step) for s in steps if s.calls_llm]
    assert calls[:10] == [
        ("aff", "preparation"),
        ("neg", "preparation"),
        ("aff", "affirmative_constructive"),
        ("neg", "neg_question_1"),
        ("aff", "aff_answer_1"),
        ("neg", "neg_question_2"),
        ("aff", "aff_answer_2"),
        ("neg", "negative_constructive"),
        ("aff", "aff_question_1"),
        ("neg", "neg_answer_1"),
    ]
    by_step = {s.step: s for s in steps}
    assert by_step["neg_question_2"].prompt == LD_NEG_QUESTION_2
    assert by_step["aff_answer_2"].prompt == LD_AFF_ANSWER_2
    assert by_step["aff_answer_2"].word_limit == 120
    assert card.step_label("neg_question_2") == "negative question 2"
    # The negative's constructive quotes its own preparation and the affirmative's speech, never the other's notes.
    assert "<neg preparation 2>" in by_step["negative_constructive"].prompt
    assert "<aff affirmative_constructive 3>" in by_step["negative_constructive"].prompt
    assert "<aff preparation 1>" not in json.dumps(by_step["negative_constructive"].messages)


def test_a_cross_examinations_label_names_its_questions_and_answers_unless_they_have_their_own():
    card = parse_card(
        """
name: cx
title: CX
sides: [{key: aff, stance: for}, {key: neg, stance: against}]
seats: [{key: a, side: aff}, {key: n, side: neg}]
stages:
  - {speech: case, seat: a, prompt: Argue.}
  - cross: cx_a
    label: cross-examination of the First Affirmative
    asker: n
    answerer: a
    exchanges: 2
    question: {step: n_asks_a, prompt: Ask.}
    answer: {step: a_answers_n, label: First Affirmative's answer, prompt: Answer.}
  - cross: cx_n
    asker: a
    answerer: n
    question: {step: a_asks_n, prompt: Ask.}
    answer: {step: n_answers_a, prompt: Answer.}
"""
    )
    labels = [(s.step, s.label) for s in card.layout({}).slots if s.kind == "TURN"]
    assert labels == [
        ("case", "case"),
        ("n_asks_a_1", "cross-examination of the First Affirmative, question 1"),
        ("a_answers_n_1", "First Affirmative's answer 1"),
        ("n_asks_a_2", "cross-examination of the First Affirmative, question 2"),
        ("a_answers_n_2", "First Affirmative's answer 2"),
        ("a_asks_n_1", "a asks n 1"),
        ("n_answers_a_1", "n answers a 1"),
    ]
    assert card.step_label("n_asks_a_2") == "cross-examination of the First Affirmative, question 2"


def test_the_judge_reading_every_statement_sees_the_speeches_but_no_private_notes():
    card = load("lincoln-douglas")
    steps, _, records, _ = run(card, config_for(card), reply=reply)
    deliberate = next(s for s in steps if s.step == "deliberate")
    assert deliberate.messages[0]["content"].startswith("judge persona\n\nThe debate topic is: School uniforms")
    text = json.dumps(deliberate.messages)
    for record in records:
        if record.seat in ("aff", "neg"):
            assert (record.content in text) == (record.kind == "TURN"), record.step


ROUNDS = """\
name: rounds
title: Rounds
options:
  rounds: {default: 3, min: 1, max: 5}
sides:
  - {key: x, stance: for}
  - {key: y, stance: against}
seats:
  - {key: a, side: x}
  - {key: b, side: y}
stages:
  - repeat: rounds
    stages:
      - speech: talk
        seat: [a, b]
        prompt: "Round {round} of {rounds}, {speaker} for {side}: answer {previous_speaker}."
        first:
          step: open
          prompt: "{speaker} opens on {topic} against {opponent}."
        final:
          step: close
          prompt: "{speaker} closes; the last words were: {previous}"
"""


@pytest.mark.parametrize(
    ("rounds", "expected"),
    [
        (1, [("a", "open", "A-name opens on School uniforms against B-name.")]),
        (
            2,
            [
                ("a", "open", "A-name opens on School uniforms against B-name."),
                ("b", "close", "B-name closes; the last words were: <a open 1>"),
            ],
        ),
        (
            4,
            [
                ("a", "open", "A-name opens on School uniforms against B-name."),
                ("b", "talk", "Round 2 of 4, B-name for Y: answer A-name."),
                ("a", "close", "A-name closes; the last words were: <b talk 2>"),
                ("b", "close", "B-name closes; the last words were: <a close 3>"),
            ],
        ),
    ],
)
def test_rounds_use_the_first_prompt_first_and_each_seats_final_prompt_last(rounds, expected):
    card = parse_card(ROUNDS)
    steps, _, _, _ = run(card, config_for(card, {"rounds": rounds}), reply=reply)
    assert [(s.seat, s.step, s.prompt) for s in steps if s.calls_llm] == expected


SEES = """\
name: sees
title: Sees
sides:
  - {key: x}
  - {key: y}
seats:
  - {key: a, side: x}
  - {key: b, side: y}
stages:
  - plan: notes
    seat: a
    prompt: Plan.
  - speech: one
    seat: a
    prompt: One.
  - speech: two
    seat: b
    sees: last
    prompt: Two.
  - speech: three
    seat: a
    sees: none
    prompt: "Three, after {opponent_two}."
  - speech: four
    seat: b
    sees: all
    prompt: Four.
"""


def test_what_a_speaker_sees_is_what_its_stage_says():
    card = parse_card(SEES)
    steps, _, _, _ = run(card, config_for(card), reply=reply)
    messages = {s.step: list(s.messages) for s in steps if s.calls_llm}
    assert messages["one"] == [
        {"role": "system", "content": "a persona"},
        {"role": "user", "content": "Plan."},
        {"role": "assistant", "content": "<a notes 1>"},
        {"role": "user", "content": "One."},
    ]
    assert messages["two"] == [
        {"role": "system", "content": "b persona"},
        {"role": "user", "content": "A-name: <a one 2>\n\nTwo."},
    ]
    assert messages["three"] == [
        {"role": "system", "content": "a persona"},
        {"role": "user", "content": "Three, after <b two 3>."},
    ]
    assert messages["four"] == [
        {
            "role": "system",
            "content": "b persona\n\nThe debate topic is: School uniforms\n"
            "You are B-name (Y), the debater in this debate.",  # its side by its label, as {side} says it
        },
        {"role": "user", "content": "A-name: <a one 2>"},
        {"role": "assistant", "content": "<b two 3>"},
        {"role": "user", "content": "A-name: <a three 4>\n\nFour."},
    ]


# -- ending early, people in seats ----------------------------------------------------------------------------
def test_ending_an_oxford_debate_early_lets_the_moderator_close_and_opens_the_final_vote():
    card = load("oxford-style")
    config = config_for(card)
    _, _, records, _ = run(
        card, config, reply=reply, stop=lambda rs: any(r.step == "opening_for_1" and r.kind == "TURN" for r in rs)
    )
    ending = config_for(card, is_ending=True)
    steps, _, records, plan = run(card, ending, records, reply=reply)
    assert [(s.kind, s.seat, s.step) for s in steps] == [
        ("SYSTEM", None, "early_close"),
        ("TURN", "moderator", "early_close"),
    ]
    assert steps[0].content == (
        "[SYSTEM]: The debate has been ended early. Moderator, briefly sum up where the two sides stand and ask "
        "the audience to cast their final vote."
    )
    assert (
        card.system_line(steps[0].content)
        == "The owner ended the debate early: the moderator sums up and opens the final vote."
    )
    assert plan.finished
    assert card.ended_early({}, 1) == "Ended by its owner after 1 of 10 statements."


def test_ending_lincoln_douglas_early_goes_to_the_verdict_on_what_was_said():
    card = load("lincoln-douglas")
    config = config_for(card)
    _, _, records, _ = run(card, config, reply=reply, stop=lambda rs: any(r.step == "aff_answer_1" for r in rs))
    steps, _, records, plan = run(card, config_for(card, is_ending=True), records, reply=reply)
    assert [s.step for s in steps] == ["deliberate", "confirm_winner", "verdict_json", "announce"]
    assert plan.finished and card.outcome(config, records)["winner"] == "Aff-name"


def test_ending_before_anyone_spoke_finishes_without_a_verdict():
    card = load("lincoln-douglas")
    _, _, records, _ = run(card, config_for(card), reply=reply, stop=lambda rs: len(rs) >= 3)
    plan = card.next_steps(config_for(card, is_ending=True), records)
    assert plan.steps == () and plan.finished
    assert card.outcome(config_for(card), records) == {}


def test_a_person_in_a_seat_is_waited_for_and_heard_by_everyone_after():
    card = load("oxford-style")
    config = config_for(card, human=("for1",))
    steps, _, records, plan = run(card, config, reply=reply)
    assert plan.waiting_for == "for1" and not plan.finished
    assert [s.step for s in steps if s.kind == "SYSTEM"] == ["welcome", "opening_for_1"]
    records.append(
        Record(
            ordinal=max(r.ordinal for r in records) + 1,
            kind="USER",
            seat="for1",
            step="human",
            content="Uniforms level the field.",
        )
    )
    steps, _, _, _ = run(
        card,
        config,
        records,
        reply=reply,
        stop=lambda rs: any(r.step == "opening_against_1" and r.kind == "TURN" for r in rs),
    )
    against = next(s for s in steps if s.step == "opening_against_1" and s.kind == "TURN")
    assert against.messages[-1]["content"].endswith(
        "[SYSTEM]: Opening statements. For1-name, for the motion.\n\nFor1-name: Uniforms level the field.\n\n"
        "[SYSTEM]: Against1-name, against the motion.\n\n"
        'Give your opening statement against the motion "School uniforms". Answer what you have just heard, and '
        "speak\nto the audience: the side that changes the most minds wins."
    )


def test_a_person_may_only_take_a_seat_the_card_opens_to_people():
    card = load("oxford-style")
    with pytest.raises(Exception, match="is for a persona, not a person"):
        card.validate(config_for(card, human=("against1",)))
    card.validate(config_for(card, human=("for1",)))


# -- verdicts ---------------------------------------------------------------------------------------------------
def test_british_parliamentary_ranks_the_four_teams_with_a_validated_ranking():
    card = load("british-parliamentary")
    config = config_for(card)
    steps, _, records, _ = run(card, config, reply=reply)
    decide = next(s for s in steps if s.step == "verdict_json")
    teams = ["Opening Government", "Opening Opposition", "Closing Government", "Closing Opposition"]
    scores = {t: {"argument": 5, "engagement": 5, "role": 5} for t in teams}
    jsonschema.validate({"ranking": teams, "scores": scores}, decide.json_schema)
    for bad in (teams[:3], [*teams[:3], teams[0]], [*teams[:3], "Nobody"]):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"ranking": bad, "scores": scores}, decide.json_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"ranking": teams, "scores": {**scores, teams[0]: {"argument": 11, "engagement": 5, "role": 5}}},
            decide.json_schema,
        )
    outcome = card.outcome(config, records)
    assert outcome["ranking"] == list(reversed(teams)) and outcome["winner"] == "Closing Opposition"
    assert outcome["scores"] == dict.fromkeys(teams, 15) and outcome["premise_upheld"] is None
    assert card.ranks_teams() and card.verdict_label == "Ranking" and card.poll == "people"
    deliberate = next(s for s in steps if s.step == "deliberate")
    assert (
        "compare the four teams: Opening Government, Opening Opposition, Closing Government and Closing Opposition."
        in (deliberate.prompt.replace("\n", " "))
    )
    assert "{names_or}" not in decide.prompt and "'Opening Government', 'Opening Opposition'" in decide.prompt


def test_a_ranking_that_failed_validation_ranks_no_team_the_judge_did_not_score():
    """British Parliamentary's judge gives no running scores: a failed ranking ranks nobody (it once ranked the
    teams in seat order, as if judged), and the verdict says it is not the judge's own."""
    card = load("british-parliamentary")
    config = config_for(card)

    def broken(step):
        if step.step == "verdict_json":
            return "first: OG", {"fallback": True, "error": "no valid JSON"}
        return reply(step)

    _, _, records, _ = run(card, config, reply=broken)
    outcome = card.outcome(config, records)
    assert outcome["ranking"] == [] and outcome["winner"] == ""
    assert outcome["scores"] == {}
    assert card.verdict_fallback(config, records) == (
        "The judge gave no valid verdict after three attempts, so no team is ranked: it scored not every team."
    )
    assert card.verdict_fallback(config, run(card, config, reply=reply)[2]) == ""


def test_a_rubric_verdict_sums_each_sides_criteria():
    card = load("world-schools")
    config = config_for(card, premise="Schools should require uniforms")
    _, _, records, _ = run(card, config, reply=reply)
    assert card.outcome(config, records) == {
        "winner": "Proposition",
        "scores": {"Proposition": 15, "Opposition": 15},
        "premise_upheld": True,
        "announcement": "<judge announce 18>",
    }


def test_card_format_parses_a_text_once():
    text = (CARDS / "duel-card.yaml").read_text()
    assert card_format(text) is card_format(text)
    assert card_format(text).source == text


def test_the_plan_is_every_call_in_order_with_who_reads_what():
    card = load("duel-card")
    plan = card.plan({"turns": 2})
    assert [p.ordinal for p in plan] == list(range(1, 15))
    assert [(p.seat, p.kind, p.visibility) for p in plan[:6]] == [
        ("a", "PLAN", "private"),
        ("b", "PLAN", "private"),
        ("a", "THINK", "private"),
        ("a", "TURN", "public"),
        ("judge", "THINK", "private"),
        ("judge", "SCORE", "public"),
    ]
    assert plan[3].judged_by == "judge" and plan[3].sees == "its own earlier calls only"
    assert plan[6].reads == ("opening (Debater A (for))",)
    assert sum(p.calls_llm for p in plan) == card.calls({"turns": 2}) == 14


def test_the_example_in_the_card_reference_runs_as_the_reference_says():
    page = (CARDS.parent / "docs" / "cards.md").read_text()
    text = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    card = parse_card(text)
    steps, _, _, plan = run(card, config_for(card), reply=reply)
    assert [(s.seat, s.step) for s in steps if s.calls_llm] == [
        ("a", "notes"),
        ("b", "notes"),
        ("a", "open"),
        ("b", "argue"),
        ("a", "close"),
        ("b", "close"),
        ("judge", "confirm_winner"),
        ("judge", "verdict_json"),
        ("judge", "announce"),
    ]
    assert plan.finished


@pytest.mark.parametrize("name", SHIPPED)
def test_each_shipped_cards_protocol_page_holds_the_card_as_it_runs(name):
    page = (CARDS.parent / "docs" / "protocols" / f"{name}.md").read_text()
    assert protocol_markdown(load(name)) in page


async def test_a_ranking_verdict_is_answered_validly_at_the_first_attempt_by_the_test_server(llm_server):
    """Through the real client: a four-team ranking asked of the project's test server comes back as a valid
    ranking (every team once), so tournaments of ranking cards run on it without JSON retries."""
    card = load("british-parliamentary")
    steps, _, _, _ = run(card, config_for(card), reply=reply)
    decide = next(s for s in steps if s.step == "verdict_json")
    endpoint = Endpoint(name="test", base_url=llm_server.url, api_key="k", model="test-model", json_mode="json_schema")
    options = ChatOptions(json_schema=dict(decide.json_schema))
    result = await chat(endpoint, decide.messages, options, policy=Policy(timeout=2.0, max_retries=1, backoff=0.01))
    assert result.attempts == 1
    jsonschema.validate(result.data, decide.json_schema)
    assert sorted(result.data["ranking"]) == sorted(card.verdict_names(config_for(card)))


CONSULTANCY = """\
name: consultancy
title: Consultancy
description: One consultant argues an assigned answer; the judge questions it, then decides which answer is right.
options:
  questions: {default: 2, min: 1, max: 4}
sides:
  - {key: yes, label: "Yes", stance: for}
  - {key: no, label: "No", stance: against}
seats:
  - {key: consultant, role: debater, side: yes}
  - {key: judge, role: judge}
stages:
  - speech: argument
    seat: consultant
    prompt: "Argue that the answer to {topic} is yes, in at most {questions} points."
  - cross: questioning
    asker: judge
    answerer: consultant
    exchanges: questions
    question:
      prompt: "Question the consultant about: {last_argument}{exchanges}"
    answer:
      prompt: "The judge asks: {question}"
judge:
  seat: judge
  verdict:
    decide: 'Which answer is right? {{"winner": "Yes", "scores": {{"Yes": 6, "No": 4}}}} from {names_or}.'
"""


def test_a_judge_may_question_a_lone_consultant_and_pick_an_answer_nobody_argued():
    card = parse_card(CONSULTANCY)
    config = config_for(card)
    steps, _, records, plan = run(card, config, reply=reply)
    assert [(s.seat, s.step) for s in steps if s.calls_llm] == [
        ("consultant", "argument"),
        ("judge", "question_1"),
        ("consultant", "answer_1"),
        ("judge", "question_2"),
        ("consultant", "answer_2"),
        ("judge", "verdict_json"),
    ]
    by_step = {s.step: s for s in steps}
    assert by_step["argument"].prompt == "Argue that the answer to School uniforms is yes, in at most 2 points."
    assert by_step["question_2"].prompt == (
        "Question the consultant about: <consultant argument 1>\n"
        'Earlier you asked: "<judge question_1 2>"\nThey answered: "<consultant answer_1 3>"\n'
    )
    assert by_step["verdict_json"].kind == "VERDICT"
    assert by_step["verdict_json"].json_schema["properties"]["winner"]["enum"] == ["Consultant-name", "No"]
    assert plan.finished and card.outcome(config, records)["winner"] == "Consultant-name"
    assert card.statements({}) == 3 and card.seat_for("against") is None


TEAMS = """\
name: teams
title: Teams
sides:
  - {key: x, label: Team X}
  - {key: y, label: Team Y}
seats:
  - {key: x1, side: x}
  - {key: x2, side: x}
  - {key: y1, side: y}
  - {key: judge, role: judge}
  - {key: y2, side: y, required: false}
stages:
  - plan: notes
    seat: [x1, x2, y1, y2]
    prompt: Prepare.
  - speech: first
    seat: x2
    prompt: "Your partner's notes: {team_notes}. Their notes are not yours to read."
  - speech: second
    seat: y2
    prompt: "Answer {opponent_first}."
  - speech: third
    seat: y1
    prompt: "Answer {last_first}; your team said: {team_second}."
judge:
  seat: judge
  score:
    prompt: "Score {scored}: {speech}"
"""


def test_partners_read_each_others_notes_and_an_empty_optional_seat_is_skipped_with_its_judging():
    card = parse_card(TEAMS)
    config = DebateConfig(format="teams", topic="T", seats=tuple(s for s in seats_for(card) if s.key != "y2"))
    steps, _, _, plan = run(card, config, reply=reply)
    calls = [(s.seat, s.step) for s in steps if s.calls_llm]
    assert calls == [
        ("x1", "notes"),
        ("x2", "notes"),
        ("y1", "notes"),
        ("x2", "first"),
        ("judge", "score"),
        ("y1", "third"),
        ("judge", "score"),
    ]
    by_step = {s.step: s for s in steps if s.calls_llm}
    # The latest note of X's team is x2's own (x1's came before it); Y's notes never reach X.
    assert by_step["first"].prompt == "Your partner's notes: <x2 notes 2>. Their notes are not yours to read."
    assert by_step["third"].prompt == "Answer <x2 first 5>; your team said: ."
    assert plan.finished


FUZZ_VALUES = [
    None,
    0,
    -1,
    3,
    True,
    "",
    "x",
    "{topic}",
    "{previous}",
    [],
    ["a"],
    {},
    "judge",
    "all",
    "ranking",
    "turns",
]


def _mutate(node, rng):
    """Replace, drop or reorder one field somewhere in a card's data."""
    if isinstance(node, dict) and node:
        key = rng.choice(list(node))
        if isinstance(node[key], dict | list) and rng.random() < 0.7:
            _mutate(node[key], rng)
        elif rng.random() < 0.7:
            node[key] = rng.choice(FUZZ_VALUES)
        else:
            del node[key]
    elif isinstance(node, list) and node:
        index = rng.randrange(len(node))
        if isinstance(node[index], dict | list) and rng.random() < 0.7:
            _mutate(node[index], rng)
        elif rng.random() < 0.5:
            node.insert(0, node.pop(index))
        else:
            del node[index]


def test_a_mangled_card_is_refused_with_problems_or_runs_to_its_end():
    """Seeded mutations of the shipped cards: parsing raises nothing but CardError, and a card that parses runs
    to its end, and to its end when ended early, with no other exception."""
    rng = random.Random(34)
    texts = [(CARDS / f"{name}.yaml").read_text() for name in SHIPPED]
    parsed = 0
    for _ in range(60):
        data = yaml.safe_load(rng.choice(texts))
        for _ in range(rng.randint(1, 2)):
            _mutate(data, rng)
        try:
            card = parse_card(yaml.safe_dump(data, sort_keys=False))
        except CardError as error:
            assert error.problems
            continue
        parsed += 1
        _, _, records, plan = run(card, config_for(card), reply=reply, stop=lambda rs: len(rs) > 4)
        _, _, records, plan = run(card, config_for(card, is_ending=True), records, reply=reply)
        assert plan.finished
        card.outcome(config_for(card), records)
    assert parsed >= 5
