"""The seed formats as cards: cards/duel-card.yaml and cards/classic-card.yaml run the same debate as the built-in
judged duel and classic format, prompt for prompt, message list for message list, in the same order and waves,
with the same verdict. Both are driven by one pure driver (no database, no LLM) on the same config and replies."""

import dataclasses
import json
from pathlib import Path

import pytest

from debates.formats import DebateConfig, Record, SeatInfo
from debates.formats.card import parse_card
from debates.formats.duel import Duel
from debates.formats.moderated import Classic

CARDS = Path(__file__).resolve().parents[3] / "cards"
DUEL_CARD = parse_card((CARDS / "duel-card.yaml").read_text())
CLASSIC_CARD = parse_card((CARDS / "classic-card.yaml").read_text())

A = SeatInfo("a", "debater", "Ada", "for", "Ada's system prompt")
B = SeatInfo("b", "debater", "Bob", "against", "Bob's system prompt")
J = SeatInfo("judge", "judge", "Judy", "", "Judy's system prompt")
M = SeatInfo("moderator", "moderator", "Mo", "", "Mo's system prompt")
P = SeatInfo("pro", "debater", "Pam", "pro", "Pam's system prompt")
C = SeatInfo("con", "debater", "Cal", "con", "Cal's system prompt")

STEP_FIELDS = (
    "ordinal",
    "kind",
    "step",
    "seat",
    "prompt",
    "messages",
    "visibility",
    "json_schema",
    "json_fallback",
    "word_limit",
    "content",
)


def duel_reply(step, winner="Bob"):
    if step.kind == "SCORE":
        data = {"score": 5 + step.ordinal % 4, "reasoning": f"reason {step.ordinal}"}
        return json.dumps(data), data
    if step.step == "confirm_winner":
        return winner, {}
    if step.step == "verdict_json":
        data = {"winner": winner, "scores": {"Ada": 6, "Bob": 8}}
        return json.dumps(data), data
    return f"<{step.seat} {step.step} {step.ordinal}>", {}


def run(fmt, config, records=(), reply=duel_reply, stop=None):
    """Land every ready step, wave by wave, as the engine does; return (steps, waves, records, last plan)."""
    records, steps, waves = list(records), [], []
    while True:
        plan = fmt.next_steps(config, records)
        if not plan.steps:
            return steps, waves, records, plan
        waves.append(sorted(s.ordinal for s in plan.steps if s.calls_llm))
        for step in plan.steps:
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
            steps.append(step)
        if stop and stop(records):
            return steps, waves, records, fmt.next_steps(config, records)


def assert_same_steps(built_in, card, fields=STEP_FIELDS):
    """The same steps; a header differs only in the format's name."""
    built_in = sorted(built_in, key=lambda s: s.ordinal)
    card = sorted(card, key=lambda s: s.ordinal)
    headers = [(c, b) for c, b in zip(card, built_in, strict=False) if b.kind == "HEADER"]
    for ours, theirs in headers:
        assert {**ours.data, "format": theirs.data["format"]} == theirs.data
    built_in = [s for s in built_in if s.kind != "HEADER"]
    card = [s for s in card if s.kind != "HEADER"]
    assert [(s.kind, s.seat, s.step) for s in card] == [(s.kind, s.seat, s.step) for s in built_in]
    for ours, theirs in zip(card, built_in, strict=True):
        for name in fields:
            assert getattr(ours, name) == getattr(theirs, name), (ours.ordinal, name)


def duel_config(turns=6, premise="Cities should ban cars", judge=True, is_ending=False, word_limit=0):
    return DebateConfig(
        format="duel",
        topic="Cars in cities",
        premise=premise,
        options={"turns": turns, "word_limit": word_limit},
        seats=(A, B, J) if judge else (A, B),
        is_ending=is_ending,
    )


@pytest.mark.parametrize("turns", [1, 2, 3, 6, 7])
@pytest.mark.parametrize("premise", ["", "Cities should ban cars"])
@pytest.mark.parametrize("judge", [True, False])
def test_the_duel_card_is_the_duel_step_for_step(turns, premise, judge):
    config = duel_config(turns, premise, judge, word_limit=120)
    theirs, their_waves, their_records, their_plan = run(Duel(), config)
    ours, our_waves, our_records, our_plan = run(DUEL_CARD, config)
    assert_same_steps(theirs, ours, (*STEP_FIELDS, "data"))
    # The same waves: the judge evaluates a statement while the next speaker thinks (19 waves for six turns).
    assert our_waves == their_waves
    assert our_plan.finished and their_plan.finished
    assert DUEL_CARD.outcome(config, our_records) == Duel().outcome(config, their_records)
    calls = sum(1 for s in ours if s.calls_llm)
    assert calls == (4 * turns + 6 if judge else 2 * turns + 2)
    if judge:
        assert DUEL_CARD.calls(config.options) == calls


def test_the_duel_cards_critical_path_is_nineteen_calls_for_six_turns():
    _, waves, _, _ = run(DUEL_CARD, duel_config())
    assert len(waves) == 19
    assert waves[0] == [1, 2] and waves[3] == [5, 7] and waves[4] == [6, 8]


@pytest.mark.parametrize("winner", ["Ada", "Nobody really"])
def test_the_duel_cards_verdict_follows_the_confirmed_winner_like_the_duels(winner):
    config = duel_config(turns=4)
    theirs, _, their_records, _ = run(Duel(), config, reply=lambda s: duel_reply(s, winner))
    ours, _, our_records, _ = run(DUEL_CARD, config, reply=lambda s: duel_reply(s, winner))
    assert_same_steps(theirs, ours, (*STEP_FIELDS, "data"))
    assert DUEL_CARD.outcome(config, our_records) == Duel().outcome(config, their_records)


def test_the_duel_cards_verdict_falls_back_like_the_duels_when_the_json_failed():
    def reply(step):
        if step.step == "verdict_json":
            return "no json here", {"fallback": True}
        if step.step == "score_first":
            data = {"score": 9 if step.data["for"] == "a" else 4, "reasoning": "r"}
            return json.dumps(data), data
        return duel_reply(step, winner="Ada")

    config = duel_config(turns=2)
    _, _, theirs, _ = run(Duel(), config, reply=reply)
    _, _, ours, _ = run(DUEL_CARD, config, reply=reply)
    expected = {
        "winner": "Ada",
        "scores": {"Ada": 9, "Bob": 4},
        "premise_upheld": True,
        "announcement": "<judge announce 14>",
    }
    assert DUEL_CARD.outcome(config, ours) == Duel().outcome(config, theirs) == expected


@pytest.mark.parametrize("after", [2, 3, 4, 8, 11, 12, 14, 26])
def test_ending_the_duel_card_early_matches_the_duel(after):
    """Ended once ordinal `after` has landed: the same closing steps (judging of what was said, the verdict)."""
    config = duel_config()
    stop = lambda records: any(r.ordinal == after for r in records)  # noqa: E731
    theirs, _, their_records, _ = run(Duel(), config, stop=stop)
    ours, _, our_records, _ = run(DUEL_CARD, config, stop=stop)
    ending = dataclasses.replace(config, is_ending=True)
    their_end, _, their_records, their_plan = run(Duel(), ending, their_records)
    our_end, _, our_records, our_plan = run(DUEL_CARD, ending, our_records)
    assert_same_steps(theirs + their_end, ours + our_end, (*STEP_FIELDS, "data"))
    assert our_plan.finished and their_plan.finished
    assert DUEL_CARD.outcome(ending, our_records) == Duel().outcome(ending, their_records)


def test_the_duel_cards_step_labels_are_the_duels():
    steps, _, _, _ = run(DUEL_CARD, duel_config())
    for step in steps:
        assert DUEL_CARD.step_label(step.step) == Duel().step_label(step.step), step.step


def classic_config(free_turns=4, premise="", is_ending=False, word_limit=0):
    return DebateConfig(
        format="classic",
        topic="Cars in cities",
        premise=premise,
        options={"free_turns": free_turns, "word_limit": word_limit},
        seats=(M, P, C),
        is_ending=is_ending,
    )


def classic_reply(step):
    return f"<{step.seat} {step.step} {step.ordinal}>", {}


def system_data(steps):
    return [{k: s.data[k] for k in ("seat", "stage", "status")} for s in steps if s.kind == "SYSTEM"]


@pytest.mark.parametrize("free_turns", [1, 4, 5])
@pytest.mark.parametrize("premise", ["", "Cities should ban cars"])
def test_the_classic_card_is_classic_step_for_step(free_turns, premise):
    config = classic_config(free_turns, premise, word_limit=90)
    theirs, _, _, their_plan = run(Classic(), config, reply=classic_reply)
    ours, _, _, our_plan = run(CLASSIC_CARD, config, reply=classic_reply)
    theirs = [s for s in theirs if s.kind != "HEADER"]
    ours = [s for s in ours if s.kind != "HEADER"]
    assert_same_steps(theirs, ours)
    # The status line each seat's system prompt carries is stored on the SYSTEM event, as in classic.
    assert system_data(ours) == system_data(theirs)
    assert our_plan.finished and their_plan.finished
    assert CLASSIC_CARD.calls(config.options) == sum(1 for s in ours if s.calls_llm) == 10 + free_turns


@pytest.mark.parametrize("after", [1, 2, 3, 4, 9, 13])
def test_ending_the_classic_card_early_brings_the_same_final_summary(after):
    """Ended after `after` events: a persona whose instruction is out still answers, then the moderator gets
    the termination line; its ordinal is the card's own (after the script), everything else is the same."""
    config = classic_config(free_turns=2)
    stop = lambda records: len(records) > after  # noqa: E731
    theirs, _, their_records, _ = run(Classic(), config, reply=classic_reply, stop=stop)
    ours, _, our_records, _ = run(CLASSIC_CARD, config, reply=classic_reply, stop=stop)
    ending = dataclasses.replace(config, is_ending=True)
    their_end, _, _, their_plan = run(Classic(), ending, their_records, reply=classic_reply)
    our_end, _, _, our_plan = run(CLASSIC_CARD, ending, our_records, reply=classic_reply)
    fields = tuple(f for f in STEP_FIELDS if f != "ordinal")
    theirs = [s for s in theirs + their_end if s.kind != "HEADER"]
    ours = [s for s in ours + our_end if s.kind != "HEADER"]
    assert [(s.kind, s.seat, s.step) for s in ours] == [(s.kind, s.seat, s.step) for s in theirs]
    for mine, other in zip(ours, theirs, strict=True):
        for name in fields:
            assert getattr(mine, name) == getattr(other, name), (other.ordinal, name)
    assert ours[-1].step == "termination" and our_plan.finished and their_plan.finished
    assert CLASSIC_CARD.system_line(ours[-2].content) == Classic().system_line(theirs[-2].content)


def test_the_classic_cards_page_lines_are_classics():
    steps, _, _, _ = run(CLASSIC_CARD, classic_config(), reply=classic_reply)
    for step in steps:
        if step.kind == "SYSTEM":
            assert CLASSIC_CARD.system_line(step.content) == Classic().system_line(step.content)
        assert CLASSIC_CARD.step_label(step.step) == Classic().step_label(step.step)
