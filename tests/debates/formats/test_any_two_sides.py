"""The judge chain reads any two-sided format's public statements, not the duel's ordinals: a judge replay of a
debate with a judge of its own, of teams, and the chain placed at another format's ordinals, ask the judge the
duel's exact prompts in the order the statements were spoken."""

import json

from debates.formats import DebateConfig, Record, SeatInfo, get_format
from debates.formats.base import PRIVATE, StepBuilder
from debates.formats.duel import EVALUATE, SCORE_FIRST, SCORE_RUNNING, JudgeChain, Statement
from debates.formats.sides_judge import sides_replay_options
from tests.simulate import run

JUDGE = SeatInfo("judge", "judge", "Judy", "", "Judy's system prompt")


def replay(options):
    config = DebateConfig(format="sides_judge", topic="Cars in cities", options=options, seats=(JUDGE,))
    get_format("sides_judge").validate(config)
    return run(config, reply=reply)[0]


def reply(step):
    if step.kind == "SCORE":
        return json.dumps({"score": 6, "reasoning": "Clear."})
    if step.step == "confirm_winner":
        return "Ada"
    return "Noted."


def test_a_debate_with_its_own_judge_is_replayed_from_its_sides_public_turns_only():
    duel = DebateConfig(
        format="duel",
        topic="Cars in cities",
        seats=(SeatInfo("a", "debater", "Ada", "for"), SeatInfo("b", "debater", "Bob", "against"), JUDGE),
    )
    records = [
        Record(4, "TURN", "a", content="Ban them."),
        Record(6, "SCORE", "judge", content='{"score": 7}'),
        Record(8, "TURN", "b", content="Keep them."),
        Record(9, "TURN", "judge", content="The judge's own words."),
        Record(12, "TURN", "a", content="Not heard.", visibility=PRIVATE),
    ]
    options = sides_replay_options(duel, records, source_debate=3)
    assert options["statements"] == [
        {"turn": 1, "seat": "a", "text": "Ban them."},
        {"turn": 2, "seat": "b", "text": "Keep them."},
    ]
    calls = replay(options)
    assert [c.prompt for c in calls if c.step == "evaluate"] == [
        EVALUATE.format(name="Ada", statement="Ban them."),
        EVALUATE.format(name="Bob", statement="Keep them."),
    ]
    assert len(calls) == get_format("sides_judge").calls(options) == 2 * 2 + 4


def test_teams_are_named_by_their_speakers_and_read_in_the_order_spoken():
    teams = DebateConfig(
        format="a-card",
        topic="Cars in cities",
        seats=(
            SeatInfo("pm", "debater", "Ada", "government"),
            SeatInfo("lo", "debater", "Bob", "opposition"),
            SeatInfo("dpm", "debater", "Cy", "government"),
            SeatInfo("chair", "moderator", "Mo"),
        ),
    )
    records = [
        Record(1, "TURN", "chair", content="Order."),
        Record(2, "TURN", "pm", content="One."),
        Record(3, "TURN", "lo", content="Two."),
        Record(4, "TURN", "dpm", content="Three."),
    ]
    options = sides_replay_options(teams, records)
    assert options["debaters"] == {"a": {"name": "Ada and Cy", "side": "for"}, "b": {"name": "Bob", "side": "against"}}
    assert [(s["seat"], s["text"]) for s in options["statements"]] == [("a", "One."), ("b", "Two."), ("a", "Three.")]
    evaluated = [c.prompt for c in replay(options) if c.step == "evaluate"]
    assert evaluated[2] == EVALUATE.format(name="Ada and Cy", statement="Three.")


def test_the_chain_at_another_formats_ordinals_asks_the_same_prompts_in_order():
    """A format whose judge scores after each speech at its own ordinals (10 + 5t) gets the duel's prompts."""
    config = DebateConfig(
        format="x", topic="t", seats=(SeatInfo("a", "debater", "Ada"), SeatInfo("b", "debater", "Bob"), JUDGE)
    )
    statements = [Statement(1, "a", "Ada", "One."), Statement(2, "b", "Bob", "Two.")]
    chain = JudgeChain(a="Ada", b="Bob", premise="", turns=2, slot=lambda t: 10 + 5 * t, verdict_at=40)
    records: list[Record] = []
    asked = []
    for _ in range(10):
        build = StepBuilder(config, records)
        chain.steps(build, statements, spoken=2)
        if not build.steps:
            break
        for step in build.steps:
            asked.append((step.ordinal, step.step, step.prompt))
            records.append(Record(step.ordinal, step.kind, "judge", step.step, step.prompt, reply(step), step.data))
    assert [(o, s) for o, s, _ in asked] == [
        (15, "evaluate"),
        (16, "score_first"),
        (20, "evaluate"),
        (21, "score_first"),
        (40, "deliberate"),
        (41, "confirm_winner"),
        (42, "verdict_json"),
        (43, "announce"),
    ]
    assert asked[1][2] == SCORE_FIRST.format(name="Ada") and asked[2][2] == EVALUATE.format(
        name="Bob", statement="Two."
    )
    assert SCORE_RUNNING not in {p for *_, p in asked}
    assert chain.finished({r.ordinal: r for r in records}, spoken=2)
