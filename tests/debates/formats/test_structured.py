"""The structured debate: the state machine, the context table, cross-examination, word limits, failures."""

from pathlib import Path

import pytest

from debates.formats import DebateConfig, SeatInfo, Side
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


def test_word_limit_applies_to_every_response_the_private_notes_included():
    calls, _, _ = run(config(word_limit=100))
    assert {c.word_limit for c in calls if c.visibility == "public"} == {100}
    assert {c.word_limit for c in calls if c.visibility == "private"} == {100}


@pytest.mark.django_db(transaction=True)
def test_an_llm_failure_leaves_an_error_debate_with_a_partial_transcript(llm_server, settings, caplog, run_to_rest):
    from debates.models import Debate, Event
    from debates.setup import SeatChoice, create_debate
    from personas.models import import_personas

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
    from debates.models import Event
    from debates.setup import SeatChoice, create_debate
    from personas.models import import_personas

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


AFF_NOTES = "AFF-SECRET: lead with the commute survey, hide the weak pilot."
NEG_NOTES = "NEG-SECRET: concede nothing on costs, bait them on culture."
# (what the prompt says, the scripted reply): one rule per call of the debate, so every prompt is known.
SCRIPT = [
    ("You will argue the affirmative side. Prepare privately", AFF_NOTES),
    ("You will argue the negative side. Prepare privately", NEG_NOTES),
    ("You argue the affirmative side. Here are your preparation notes", "Ada opens."),
    ("You argue the negative side. Here are your preparation notes", "Bob opens."),
    ("You argue the affirmative side. Your opponent", "Ada rebuts."),
    ("You argue the negative side. Your opponent", "Bob rebuts."),
    ("You argue the affirmative side. Cross-examination: you may now ask", "Ada asks?"),
    ("You argue the negative side. Cross-examination: Ada asks you", "Bob answers."),
    ("You argue the negative side. Cross-examination: you may now ask", "Bob asks?"),
    ("You argue the affirmative side. Cross-examination: Bob asks you", "Ada answers."),
    ("You argue the affirmative side. Here is the whole debate", "Ada closes."),
    ("You argue the negative side. Here is the whole debate", "Bob closes."),
]

TOPIC = "The debate topic is: Remote work\n\n"


def preparation(side, other):
    return (
        f"{TOPIC}You will argue the {side} side. Prepare privately before the debate: list your strongest\n"
        "arguments with the evidence or reasoning behind each, the arguments you expect from the\n"
        f"{other} side, and how you will answer them. These notes are for you alone."
    )


def opening(side, notes):
    return (
        f"{TOPIC}You argue the {side} side. Here are your preparation notes:\n\n{notes}\n\n"
        "Deliver your opening statement: state your position clearly and present your main arguments."
    )


def rebuttal(side, opponent, said):
    return (
        f'{TOPIC}You argue the {side} side. Your opponent, {opponent}, gave this opening statement:\n\n"{said}"\n\n'
        "Deliver your rebuttal: answer their strongest points directly and show where their case fails."
    )


def question(side, opponent, opened, rebutted):
    return (
        f"{TOPIC}You argue the {side} side. Cross-examination: you may now ask {opponent} a question.\n"
        f'Their opening statement was:\n\n"{opened}"\n\nTheir rebuttal was:\n\n"{rebutted}"\n\n'
        "Ask one pointed question that exposes a weakness in their case. Give only the question."
    )


def answer(side, opponent, asked, opened, rebutted):
    return (
        f'{TOPIC}You argue the {side} side. Cross-examination: {opponent} asks you:\n\n"{asked}"\n\n'
        f'Their opening statement was:\n\n"{opened}"\n\nTheir rebuttal was:\n\n"{rebutted}"\n\n'
        "Answer the question directly and honestly, then turn it to your advantage if you can."
    )


SO_FAR = "\n\n".join(
    [
        "Ada (affirmative, opening): Ada opens.",
        "Bob (negative, opening): Bob opens.",
        "Ada (affirmative, rebuttal): Ada rebuts.",
        "Bob (negative, rebuttal): Bob rebuts.",
        "Ada (affirmative, question 1): Ada asks?",
        "Bob (negative, answer 1): Bob answers.",
        "Bob (negative, question 1): Bob asks?",
        "Ada (affirmative, answer 1): Ada answers.",
    ]
)


def closing(side):
    return (
        f"{TOPIC}You argue the {side} side. Here is the whole debate so far:\n\n{SO_FAR}\n\n"
        "Deliver your closing statement: summarise your case, answer the most damaging point made\n"
        "against it, and say why your side should prevail."
    )


# (seat, prompt) in the order the server must receive them; a set where the two calls run side by side.
EXPECTED = [
    {("Ada", preparation("affirmative", "negative")), ("Bob", preparation("negative", "affirmative"))},
    {("Ada", opening("affirmative", AFF_NOTES))},
    {("Bob", opening("negative", NEG_NOTES))},
    {("Ada", rebuttal("affirmative", "Bob", "Bob opens.")), ("Bob", rebuttal("negative", "Ada", "Ada opens."))},
    {("Ada", question("affirmative", "Bob", "Bob opens.", "Bob rebuts."))},
    {("Bob", answer("negative", "Ada", "Ada asks?", "Ada opens.", "Ada rebuts."))},
    {("Bob", question("negative", "Ada", "Ada opens.", "Ada rebuts."))},
    {("Ada", answer("affirmative", "Bob", "Bob asks?", "Bob opens.", "Bob rebuts."))},
    {("Ada", closing("affirmative")), ("Bob", closing("negative"))},
]


@pytest.fixture
def scripted_debate(llm_server, run_to_rest):
    """A default structured debate (owned by olive, unlisted) run to its end against the scripted test server."""
    import re

    from django.contrib.auth import get_user_model

    from debates.models import Debate
    from debates.setup import SeatChoice, create_debate
    from personas.models import import_personas

    persona = "name: {n}\nrole: debater\npersonality: {n} argues.\n"
    a, b = import_personas([("a.yaml", persona.format(n="Ada")), ("b.yaml", persona.format(n="Bob"))])
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    debate = create_debate(
        format_name="structured",
        topic="Remote work",
        seats={"affirmative": SeatChoice(a), "negative": SeatChoice(b)},
        owner=owner,
        visibility=Debate.Visibility.UNLISTED,
    )
    # Latency long enough that calls which may run together visibly overlap.
    rules = [{"match": re.escape(match), "reply": reply} for match, reply in SCRIPT]
    llm_server.configure(latency=0.15, rules=rules)
    debate = run_to_rest(debate.pk)
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    return debate


@pytest.mark.django_db(transaction=True)
def test_a_default_debate_makes_twelve_calls_in_the_protocol_order_with_the_exact_prompts(scripted_debate, llm_server):
    systems = {s.name: s.system_prompt for s in scripted_debate.seats.all()}
    requests = llm_server.requests
    assert len(requests) == 12
    received = []
    for request in requests:
        name = next(n for n, system in systems.items() if request.system == system)
        assert request.messages == [
            {"role": "system", "content": systems[name]},
            {"role": "user", "content": request.last_user},
        ]
        received.append((name, request.last_user))
    position = 0
    for group in EXPECTED:
        assert set(received[position : position + len(group)]) == group, f"calls {position}-{position + len(group)}"
        position += len(group)
    prep_a, prep_b, open_a, open_b = requests[:4]
    # Both preparations are asked for at once; the negative's opening only once the affirmative's is in.
    assert max(prep_a.started, prep_b.started) < min(prep_a.finished, prep_b.finished)
    assert open_a.finished <= open_b.started


def public_exports(debate):
    """Every public export of a debate: the command line's and the share link's, Markdown and JSON."""
    from io import StringIO

    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    texts = {}
    for kind in ("md", "json"):
        out = StringIO()
        call_command("export_transcript", str(debate.pk), "--format", kind, "--public", stdout=out)
        texts[f"command {kind}"] = out.getvalue()
        response = Client().get(reverse("debate_share_export", args=[debate.share_token, kind]))
        assert response.status_code == 200
        texts[f"share link {kind}"] = response.content.decode()
    return texts


@pytest.mark.django_db(transaction=True)
def test_a_public_export_holds_no_private_text_not_even_in_prompts(scripted_debate):
    import json

    from django.test import Client
    from django.urls import reverse

    from debates import transcripts

    # The full export has the notes (in the private events and in the opening prompts): the check below can fail.
    full = transcripts.as_json(scripted_debate)
    assert full.count(AFF_NOTES) == 2 and full.count(NEG_NOTES) == 2
    # While the owner shows the thinking, viewers read the notes where they were written, and only there.
    for where, text in public_exports(scripted_debate).items():
        assert text.count(AFF_NOTES) == 1 and text.count(NEG_NOTES) == 1, where
    # Kept from viewers, they appear nowhere, prompts included.
    scripted_debate.show_thinking = False
    scripted_debate.save(update_fields=["show_thinking"])
    texts = public_exports(scripted_debate)
    for where, text in texts.items():
        assert AFF_NOTES not in text and NEG_NOTES not in text, where
        assert "AFF-SECRET" not in text and "NEG-SECRET" not in text and "Prepare privately" not in text, where
        for said in ("Ada opens.", "Bob opens.", "Ada answers.", "Bob closes."):
            assert said in text, where
    for where in ("command json", "share link json"):
        events = json.loads(texts[where])["events"]
        assert [e["step"] for e in events if e["seat"]][:2] == ["opening", "opening"]
        assert {e["visibility"] for e in events} == {"public"}
        assert all("prompt" not in e for e in events), where
    # The owner, at the debate's own address, still gets everything; so does staff.
    owner = Client()
    owner.force_login(scripted_debate.owner)
    own = owner.get(reverse("debate_export", args=[scripted_debate.pk, "json"])).content.decode()
    assert AFF_NOTES in own and NEG_NOTES in own
    # A stranger at the address of a public debate gets the public transcript.
    scripted_debate.visibility = "public"
    scripted_debate.save(update_fields=["visibility"])
    for kind in ("md", "json"):
        stranger = Client().get(reverse("debate_export", args=[scripted_debate.pk, kind])).content.decode()
        assert "Ada opens." in stranger and AFF_NOTES not in stranger and NEG_NOTES not in stranger


@pytest.mark.django_db(transaction=True)
def test_the_word_limit_cuts_the_preparation_too_with_the_warning(llm_server, caplog, run_to_rest):
    """The spec's rule is for every response: the preparation notes (shown to viewers with the thinking) too."""
    import re

    from debates import transcripts
    from debates.models import Event
    from debates.privacy import Access
    from debates.setup import SeatChoice, create_debate
    from personas.models import import_personas

    persona = "name: {n}\nrole: debater\npersonality: {n} argues.\n"
    a, b = import_personas([("a.yaml", persona.format(n="Ada")), ("b.yaml", persona.format(n="Bob"))])
    debate = create_debate(
        format_name="structured",
        topic="Remote work",
        seats={"affirmative": SeatChoice(a), "negative": SeatChoice(b)},
        options={"questions": 1, "word_limit": 5},
    )
    llm_server.configure(rules=[{"match": re.escape(match), "reply": reply} for match, reply in SCRIPT])
    run_to_rest(debate.pk)
    notes = {e.seat.key: e for e in Event.objects.filter(debate=debate, step="preparation")}
    assert notes["affirmative"].content == "AFF-SECRET: lead with the commute"
    assert notes["negative"].content == "NEG-SECRET: concede nothing on costs,"
    assert [notes[k].data["truncated_from_words"] for k in ("affirmative", "negative")] == [10, 9]
    # Both preparations: two warnings with the spec's exact text (the other replies are within 5 words).
    warnings = [r.getMessage() for r in caplog.records if "exceeded word limit" in r.getMessage()]
    assert sorted(warnings) == [
        "Response exceeded word limit of 5, truncated from 10 to 5 words",
        "Response exceeded word limit of 5, truncated from 9 to 5 words",
    ]
    public = transcripts.as_markdown(debate, access=Access(thinking=True, prompts=False))
    assert "AFF-SECRET: lead with the commute" in public and "survey" not in public and "culture" not in public


def test_its_sides_judging_and_poll():
    # What it chose; tests/debates/formats/test_interface.py checks they agree with each other.
    fmt = Structured()
    assert fmt.sides == (
        Side("affirmative", "Affirmative", ("affirmative",), "for"),
        Side("negative", "Negative", ("negative",), "against"),
    )
    assert (fmt.judging, fmt.judge_seat, fmt.poll) == ("replay", None, "sides")
