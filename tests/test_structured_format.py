"""The structured debate: the state machine, the context table, cross-examination, word limits, failures."""

from pathlib import Path

import pytest

from debates.formats import DebateConfig, SeatInfo
from debates.formats.structured import DebateState, InvalidTransition, Structured, transition
from tests.simulate import run

AFF = SeatInfo("affirmative", "debater", "Ada", "affirmative", "Ada's persona")
NEG = SeatInfo("negative", "debater", "Bob", "negative", "Bob's persona")
S = DebateState


def config(**options):
    return DebateConfig(format="structured", topic="Remote work", options={"questions": 2, **options}, seats=(AFF, NEG))


def test_the_full_sequence_and_which_steps_run_together():
    fmt = Structured()
    records, waves = [], []
    from tests.simulate import land

    while True:
        plan = fmt.next_steps(config(), records)
        if not plan.steps:
            break
        waves.append([(s.seat, s.step) for s in plan.steps if s.calls_llm])
        for step in plan.steps:
            land(records, step)
    assert plan.finished
    assert [w for w in waves if w] == [
        [("affirmative", "preparation"), ("negative", "preparation")],
        [("affirmative", "opening")],
        [("negative", "opening")],
        [("affirmative", "rebuttal"), ("negative", "rebuttal")],
        [("affirmative", "question_1")],
        [("negative", "answer_1")],
        [("affirmative", "question_2")],
        [("negative", "answer_2")],
        [("negative", "question_1")],
        [("affirmative", "answer_1")],
        [("negative", "question_2")],
        [("affirmative", "answer_2")],
        [("affirmative", "closing"), ("negative", "closing")],
    ]
    assert fmt.state(config(), {r.ordinal: r for r in records}) == S.CLOSING_STATEMENTS
    kinds = {r.step: (r.kind, r.visibility) for r in records if r.seat}
    assert kinds["preparation"] == ("PLAN", "private") and kinds["opening"] == ("TURN", "public")


def test_each_round_sees_only_what_the_context_table_allows():
    calls, records, _ = run(config())
    by = {(c.seat, c.step): c for c in calls}
    content = {(r.seat, r.step): r.content for r in records if r.seat}
    everything = list(content.values())

    def seen(call):
        return {text for text in everything if text in call.prompt}

    assert seen(by["affirmative", "preparation"]) == set()
    assert seen(by["affirmative", "opening"]) == {content["affirmative", "preparation"]}
    assert seen(by["negative", "opening"]) == {content["negative", "preparation"]}
    assert seen(by["affirmative", "rebuttal"]) == {content["negative", "opening"]}
    assert seen(by["negative", "rebuttal"]) == {content["affirmative", "opening"]}
    assert seen(by["affirmative", "question_1"]) == {content["negative", "opening"], content["negative", "rebuttal"]}
    assert seen(by["negative", "answer_1"]) == {
        content["affirmative", "question_1"],
        content["affirmative", "opening"],
        content["affirmative", "rebuttal"],
    }
    closing = seen(by["affirmative", "closing"])
    public = {text for (seat, step), text in content.items() if step not in ("preparation", "closing")}
    assert closing == public  # all previous statements from both sides, and no preparation notes
    assert by["affirmative", "opening"].messages == (
        {"role": "system", "content": "Ada's persona"},
        {"role": "user", "content": by["affirmative", "opening"].prompt},
    )


def test_a_later_question_recalls_the_askers_earlier_exchange():
    calls, _records, _ = run(config())
    second = next(c for c in calls if c.seat == "affirmative" and c.step == "question_2")
    assert "<affirmative question_1 7>" in second.prompt and "<negative answer_1 8>" in second.prompt


def test_by_default_one_question_each_way_twelve_calls():
    plain = DebateConfig(format="structured", topic="Remote work", seats=(AFF, NEG))
    calls, _, plan = run(plain)
    assert plan.finished and len(calls) == 12
    assert [(c.seat, c.step) for c in calls if c.step.startswith(("question", "answer"))] == [
        ("affirmative", "question_1"),
        ("negative", "answer_1"),
        ("negative", "question_1"),
        ("affirmative", "answer_1"),
    ]


@pytest.mark.parametrize("questions", [1, 3])
def test_the_number_of_questions_is_configurable(questions):
    calls, _, _ = run(config(questions=questions))
    assert sum(c.step.startswith("question") for c in calls) == 2 * questions
    assert sum(c.step.startswith("answer") for c in calls) == 2 * questions


@pytest.mark.parametrize(("stop_after", "closings"), [(1, 0), (5, 2), (7, 2), (13, 2), (16, 0)])
def test_end_debate_goes_straight_to_both_closings_on_what_was_said(stop_after, closings):
    from dataclasses import replace

    _, records, _ = run(config(), until=lambda rs: max(r.ordinal for r in rs) >= stop_after)
    calls, records, plan = run(replace(config(), is_ending=True), records)
    assert plan.finished
    assert [c.step for c in calls] == ["closing"] * closings
    if closings:
        said = [r.content for r in records if r.kind == "TURN" and r.step != "closing"]
        assert all(text in calls[0].prompt for text in said)


VALID = [
    (S.INITIALIZED, S.PREPARATION),
    (S.PREPARATION, S.OPENING_STATEMENTS),
    (S.OPENING_STATEMENTS, S.REBUTTALS),
    (S.REBUTTALS, S.CROSS_EXAMINATION),
    (S.CROSS_EXAMINATION, S.CLOSING_STATEMENTS),
    (S.CLOSING_STATEMENTS, S.COMPLETED),
]


@pytest.mark.parametrize(("current", "target"), VALID)
def test_valid_transitions(current, target):
    assert transition(current, target) == target


@pytest.mark.parametrize(("current", "target"), [(c, t) for c in S for t in S if (c, t) not in VALID])
def test_every_other_transition_is_refused_with_its_message(current, target):
    with pytest.raises(InvalidTransition) as caught:
        transition(current, target)
    assert str(caught.value).startswith(f"Invalid state transition from {current} to {target}")


def test_word_limit_applies_to_public_statements_not_private_notes():
    calls, _, _ = run(config(word_limit=100))
    assert {c.word_limit for c in calls if c.visibility == "public"} == {100}
    assert {c.word_limit for c in calls if c.visibility == "private"} == {None}


@pytest.mark.django_db(transaction=True)
def test_an_llm_failure_leaves_an_error_debate_with_a_partial_transcript(llm_server, settings, caplog, run_to_rest):
    from chaoslm.personas.models import import_personas
    from debates.models import Debate, Event
    from debates.setup import SeatChoice, create_debate

    persona = "name: {n}\nrole: debater\npersonality: {n} argues.\n"
    a, b = import_personas([("a.yaml", persona.format(n="Ada")), ("b.yaml", persona.format(n="Bob"))])
    debate = create_debate(
        format_name="structured",
        topic="Remote work",
        seats={"affirmative": SeatChoice(a), "negative": SeatChoice(b)},
        options={"questions": 1},
    )
    llm_server.configure(rules=[{"match": "Your opponent, Bob, gave this opening", "fault": "500"}])
    debate = run_to_rest(debate.pk)
    assert debate.status == Debate.Status.ERROR
    assert Event.objects.filter(debate=debate, kind="TURN", step="opening").count() == 2
    error = Event.objects.get(debate=debate, kind="ERROR")
    assert error.step == "rebuttal"
    # The log names the debate, its state, the round, the model and the error.
    assert (
        f"debate {debate.pk} failed: status=running state=REBUTTALS round=rebuttal seat=affirmative "
        "model=test-model error=default (test-model) answered HTTP 500 after 4 tries"
    ) in caplog.text
    partial = Path(settings.CHAOSLM_TRANSCRIPTS_DIR) / f"partial-{debate.pk}.md"
    text = partial.read_text()
    for opening in Event.objects.filter(debate=debate, step="opening"):
        assert opening.content in text
    assert "**Error:**" in text and "This debate stopped with an error" in text


@pytest.mark.django_db(transaction=True)
def test_a_long_statement_is_truncated_with_the_warning(llm_server, caplog, run_to_rest):
    from chaoslm.personas.models import import_personas
    from debates.models import Event
    from debates.setup import SeatChoice, create_debate

    persona = "name: {n}\nrole: debater\npersonality: {n} argues.\n"
    a, b = import_personas([("a.yaml", persona.format(n="Ada")), ("b.yaml", persona.format(n="Bob"))])
    debate = create_debate(
        format_name="structured",
        topic="Remote work",
        seats={"affirmative": SeatChoice(a), "negative": SeatChoice(b)},
        options={"questions": 1, "word_limit": 20},
    )
    llm_server.configure(reply_words=35)
    run_to_rest(debate.pk)
    opening = Event.objects.get(debate=debate, kind="TURN", step="opening", seat__key="affirmative")
    assert len(opening.content.split()) == 20
    assert opening.data["truncated_from_words"] == 37  # "Point N:" plus 35 words
    assert "Response exceeded word limit of 20, truncated from 37 to 20 words" in caplog.text
