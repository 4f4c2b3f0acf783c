"""The judge replay: a judge alone re-judges a finished duel's public turns, exactly as the duel's judge did.

First as a pure format (prompts, privacy, order, end states), then over the test server: a duel run to
completion and replayed by the same judge persona sends that judge the same messages, step for step.
"""

import hashlib
import json
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from debates.formats import FORMATS, LISTED, DebateConfig, FormatError, Record, SeatInfo, get_format
from debates.formats.duel import outscored_by
from debates.formats.judge import replay_options
from debates.models import Debate, Event
from debates.replay import create_replay
from debates.setup import SeatChoice, create_debate
from personas.models import import_personas
from tests.debates.formats.test_duel import (
    ANNOUNCE,
    CONFIRM,
    DELIBERATE,
    EVALUATE_A,
    EXTRACT,
    SCORE_FIRST_A,
    SCORE_RUNNING_A,
    land,
)
from tests.debates.formats.test_duel import config as duel_config
from tests.debates.formats.test_duel import run as run_duel

JUDGE = get_format("judge")
DUEL = get_format("duel")
J = SeatInfo("judge", "judge", "Judy", "", "Judy's system prompt")


def reply_from_messages(step, winner="Bob"):
    """A reply that depends on everything the judge was sent, so equal replies mean equal messages."""
    digest = hashlib.sha256(json.dumps(step.messages).encode()).hexdigest()[:10]
    if step.step in ("score", "score_first"):
        data = {"score": int(digest, 16) % 11, "reasoning": digest}
        return json.dumps(data), data
    if step.step == "confirm_winner":
        return winner, {}
    if step.step == "verdict_json":
        data = {"winner": winner, "scores": {"Ada": 6, "Bob": 8}}
        return json.dumps(data), data
    return f"<{step.seat} {step.step} {digest}>", {}


def finished_duel(turns=6, premise="Cities should ban cars", stop=None):
    cfg = duel_config(turns=turns, premise=premise)
    calls, _, records = run_duel(cfg, reply=reply_from_messages, stop=stop)
    return cfg, calls, records


def replay_config(duel_cfg, records, judge=J, is_ending=False):
    return DebateConfig(
        format="judge",
        topic=duel_cfg.topic,
        premise=duel_cfg.premise,
        options=replay_options(duel_cfg, records, source_debate=41),
        seats=(judge,),
        is_ending=is_ending,
    )


def run_replay(cfg, records=None, reply=reply_from_messages):
    """Run the replay in waves as the engine would; return (calls in order, waves, records)."""
    records = list(records or [])
    calls, waves = [], []
    while True:
        plan = JUDGE.next_steps(cfg, records)
        if not plan.steps:
            assert plan.finished
            return calls, waves, records
        waves.append([s.ordinal for s in plan.steps])
        for step in plan.steps:
            land(records, step, reply)
            if step.calls_llm:
                calls.append(step)


# -- the pure format ------------------------------------------------------------------------------


def test_replay_options_hold_the_public_turns_in_order_and_nothing_private():
    cfg, _, records = finished_duel()
    options = replay_options(cfg, records, source_debate=41)
    by_ordinal = {r.ordinal: r for r in records}
    assert options == {
        "source_debate": 41,
        "turns": 6,
        "debaters": {"a": {"name": "Ada", "side": "for"}, "b": {"name": "Bob", "side": "against"}},
        "statements": [
            {"turn": t, "seat": "a" if t % 2 else "b", "text": by_ordinal[4 * t].content} for t in range(1, 7)
        ],
    }
    private = [r.content for r in records if r.kind in ("PLAN", "THINK") and r.seat in ("a", "b")]
    assert len(private) == 8
    text = json.dumps(options)
    assert not any(p in text for p in private)


def test_the_replay_sends_the_judge_exactly_what_the_duel_sent_it_step_for_step():
    duel_cfg, duel_calls, records = finished_duel()
    duel_judge = [c for c in duel_calls if c.seat == "judge"]
    calls, _, replay_records = run_replay(replay_config(duel_cfg, records))
    assert len(calls) == len(duel_judge) == 16
    for ours, theirs in zip(calls, sorted(duel_judge, key=lambda c: c.ordinal), strict=True):
        assert (ours.ordinal, ours.kind, ours.step, ours.prompt) == (
            theirs.ordinal,
            theirs.kind,
            theirs.step,
            theirs.prompt,
        )
        assert ours.messages == theirs.messages
        assert (ours.json_schema, ours.json_fallback, ours.visibility) == (
            theirs.json_schema,
            theirs.json_fallback,
            theirs.visibility,
        )
        assert ours.data == theirs.data
    replay_cfg = replay_config(duel_cfg, records)
    assert JUDGE.outcome(replay_cfg, replay_records) == DUEL.outcome(duel_cfg, records)


def test_every_prompt_is_the_spec_text():
    duel_cfg, _, records = finished_duel()
    calls, _, _ = run_replay(replay_config(duel_cfg, records))
    prompts = {c.ordinal: c.prompt for c in calls}
    opening = next(r.content for r in records if r.ordinal == 4)
    assert prompts[5] == EVALUATE_A.replace("<a opening 4>", opening)
    assert prompts[6] == SCORE_FIRST_A
    assert prompts[10] == SCORE_FIRST_A.replace("Ada", "Bob")
    assert prompts[14] == SCORE_RUNNING_A
    assert prompts[27] == DELIBERATE
    assert prompts[28] == CONFIRM
    assert prompts[29] == EXTRACT
    assert prompts[30] == ANNOUNCE
    assert calls[0].messages[0] == {"role": "system", "content": "Judy's system prompt"}


def test_no_plan_or_think_can_reach_the_judge_even_if_records_carry_them_at_turn_ordinals():
    duel_cfg, _, records = finished_duel(turns=2)
    # A tampered transcript: a private THINK stored where turn 2's statement belongs.
    tampered = [r for r in records if r.ordinal != 8] + [
        Record(ordinal=8, kind="THINK", seat="b", step="think", content="SECRET reflection", visibility="private")
    ]
    options = replay_options(duel_cfg, tampered)
    assert [s["turn"] for s in options["statements"]] == [1]
    calls, _, _ = run_replay(replay_config(duel_cfg, tampered))
    secrets = [r.content for r in records if r.kind in ("PLAN", "THINK") and r.seat in ("a", "b")]
    for call in calls:
        text = json.dumps(call.messages)
        assert "SECRET" not in text and not any(s in text for s in secrets)


def test_the_chain_runs_one_call_at_a_time_in_the_duels_ordinals():
    duel_cfg, _, records = finished_duel(turns=3)
    _, waves, replay_records = run_replay(replay_config(duel_cfg, records))
    assert waves[0] == [0, 5]  # the header, then the first evaluation at once
    assert waves[1:] == [[6], [9], [10], [13], [14], [15], [16], [17], [18]]
    assert [r.kind for r in sorted(replay_records, key=lambda r: r.ordinal)] == [
        "HEADER",
        *["THINK", "SCORE"] * 3,
        "THINK",
        "INTERNAL",
        "INTERNAL",
        "VERDICT",
    ]
    header = next(r for r in replay_records if r.ordinal == 0)
    assert header.data["format"] == "judge" and header.data["source_debate"] == 41
    assert header.data["debaters"]["b"] == {"name": "Bob", "side": "against"}


def test_a_duel_ended_early_replays_the_turns_spoken_at_the_same_ordinals():
    duel_cfg, _, records = finished_duel(stop=lambda rs: any(r.ordinal == 12 for r in rs))
    ending = duel_config(is_ending=True)
    _, _, records = run_duel(ending, records, reply=reply_from_messages)
    calls, _, replay_records = run_replay(replay_config(duel_cfg, records))
    assert [c.ordinal for c in calls] == [5, 6, 9, 10, 13, 14, 27, 28, 29, 30]
    in_duel = {r.ordinal: r for r in records if r.seat == "judge"}
    assert all(in_duel[c.ordinal].prompt == c.prompt for c in calls)
    assert JUDGE.outcome(replay_config(duel_cfg, records), replay_records)["winner"] == "Bob"


def test_a_duel_with_no_statement_replays_to_nothing_and_ending_a_replay_changes_nothing():
    duel_cfg, _, records = finished_duel(stop=lambda rs: len(rs) >= 3)
    cfg = replay_config(duel_cfg, records)
    assert cfg.options["statements"] == []
    plan = JUDGE.next_steps(cfg, [])
    assert [s.kind for s in plan.steps] == ["HEADER"] and not plan.steps[0].calls_llm
    land_header = []
    land(land_header, plan.steps[0])
    assert JUDGE.next_steps(cfg, land_header).finished
    assert JUDGE.outcome(cfg, land_header) == {}

    duel_cfg, _, records = finished_duel(turns=2)
    normal, _, _ = run_replay(replay_config(duel_cfg, records))
    ending, _, _ = run_replay(replay_config(duel_cfg, records, is_ending=True))
    assert [c.prompt for c in ending] == [c.prompt for c in normal]


def test_the_outcome_has_the_duels_shape_and_the_contradiction_shows():
    duel_cfg, _, records = finished_duel(turns=2)

    def contradicting(step):
        if step.step == "verdict_json":
            data = {"winner": "Bob", "scores": {"Ada": 9, "Bob": 4}}
            return json.dumps(data), data
        return reply_from_messages(step)

    cfg = replay_config(duel_cfg, records)
    _, _, replay_records = run_replay(cfg, reply=contradicting)
    outcome = JUDGE.outcome(cfg, replay_records)
    assert set(outcome) == {"winner", "scores", "premise_upheld", "announcement"}
    assert (outcome["winner"], outcome["scores"], outcome["premise_upheld"]) == ("Bob", {"Ada": 9, "Bob": 4}, False)
    assert outscored_by(outcome["winner"], outcome["scores"]) == "Ada"
    _, _, replay_records = run_replay(cfg)
    outcome = JUDGE.outcome(cfg, replay_records)
    assert outscored_by(outcome["winner"], outcome["scores"]) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o["statements"].pop(0), "Statement 1 must be turn 1"),
        (lambda o: o["statements"][1].update(seat="a"), "Turn 2 is spoken by debater 'b'"),
        (lambda o: o.update(turns=1), "The duel had 1 turn, but there are 2 statements"),
        (lambda o: o["debaters"]["b"].update(name="Ada"), "different names"),
        (lambda o: o["debaters"]["a"].update(side="against"), "Debater 'a' argues FOR"),
        (lambda o: o.pop("statements"), "needs the duel's statements"),
        (lambda o: o.update(extra=1), "no option called 'extra'"),
        (lambda o: o.update(source_debate="7"), "must be a debate's id"),
        (lambda o: o["statements"][0].update(text=None), "Statement 1 must be text"),
    ],
)
def test_bad_options_are_refused_with_a_message(change, message):
    duel_cfg, _, records = finished_duel(turns=2)
    options = replay_options(duel_cfg, records)
    change(options)
    cfg = DebateConfig(format="judge", topic="Cars in cities", options=options, seats=(J,))
    with pytest.raises(FormatError, match=message):
        JUDGE.validate(cfg)


def test_only_a_duel_can_be_replayed_and_the_judge_format_is_not_offered_directly():
    cfg = DebateConfig(format="classic", topic="t", seats=())
    with pytest.raises(FormatError, match="Only a judged duel"):
        replay_options(cfg, [])
    assert "judge" in FORMATS and "judge" not in LISTED


# -- over the test server, with the database ------------------------------------------------------

PERSONAS = Path(__file__).resolve().parents[3] / "personas" / "samples"
ADA, MARCUS, OKAFOR = "Ada Sterling", "Marcus Vale", "Judge Ines Okafor"


@pytest.fixture
def personas(db):
    files = ["ada-sterling.yaml", "marcus-vale.yaml", "judge-okafor.yaml"]
    saved = import_personas([(f, (PERSONAS / f).read_text()) for f in files])
    return {p.name: p for p in saved}


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user("olive", password="pw-olive-123")


def new_duel(personas, owner=None, turns=4, visibility=Debate.Visibility.PRIVATE):
    return create_debate(
        format_name="duel",
        topic="Should cities ban private cars?",
        premise="Cities should ban private cars",
        seats={
            "a": SeatChoice(personas[ADA]),
            "b": SeatChoice(personas[MARCUS]),
            "judge": SeatChoice(personas[OKAFOR]),
        },
        options={"turns": turns},
        owner=owner,
        visibility=visibility,
    )


def judge_requests(requests, personas):
    system = personas[OKAFOR].spec().system_prompt("judge")
    return [r for r in requests if r.system == system]


@pytest.mark.django_db(transaction=True)
def test_a_replay_by_the_same_judge_receives_the_same_messages_and_reaches_the_same_verdict(
    llm_server, personas, run_to_rest
):
    duel = run_to_rest(new_duel(personas).pk)
    assert duel.status == Debate.Status.COMPLETED
    in_duel = judge_requests(llm_server.requests, personas)
    assert len(in_duel) == 4 * 2 + 4
    sent = len(llm_server.requests)

    replay = create_replay(duel, SeatChoice(personas[OKAFOR]))
    assert replay.format == "judge" and replay.options["source_debate"] == duel.pk
    assert (replay.topic, replay.premise) == (duel.topic, duel.premise)
    replay = run_to_rest(replay.pk)
    assert replay.status == Debate.Status.COMPLETED
    in_replay = llm_server.requests[sent:]
    assert [r.messages for r in in_replay] == [r.messages for r in in_duel]
    assert (replay.winner, replay.scores, replay.premise_upheld, replay.announcement) == (
        duel.winner,
        duel.scores,
        duel.premise_upheld,
        duel.announcement,
    )
    assert replay.contradicts == duel.contradicts
    duel_events = [
        (e.ordinal, e.kind, e.step, e.prompt, e.content)
        for e in Event.objects.filter(debate=duel, seat__key="judge").order_by("ordinal")
    ]
    replay_events = [
        (e.ordinal, e.kind, e.step, e.prompt, e.content)
        for e in Event.objects.filter(debate=replay, seat__key="judge").order_by("ordinal")
    ]
    assert replay_events == duel_events
    # Nothing a debater wrote privately reached the replay's judge.
    private = Event.objects.filter(debate=duel, kind__in=["PLAN", "THINK"], seat__key__in=["a", "b"])
    text = json.dumps([r.messages for r in in_replay])
    assert private.count() == 6 and not any(e.content in text for e in private)


@pytest.mark.django_db(transaction=True)
def test_a_judge_whose_scores_contradict_its_winner_is_flagged_in_the_duel_and_the_replay(
    llm_server, personas, owner, client, run_to_rest
):
    llm_server.configure(
        rules=[
            {"match": "^Based on your deliberation, who won", "reply": MARCUS},
            {
                "match": "^Now express that verdict as a JSON object",
                "reply": json.dumps({"winner": MARCUS, "scores": {ADA: 9, MARCUS: 3}}),
            },
        ]
    )
    duel = run_to_rest(new_duel(personas, owner=owner, turns=2).pk)
    replay = run_to_rest(create_replay(duel, SeatChoice(personas[OKAFOR]), owner=owner).pk)
    for debate in (duel, replay):
        assert (debate.winner, debate.scores) == (MARCUS, {ADA: 9, MARCUS: 3})
        assert debate.contradicts and debate.outscored_by == ADA
    client.force_login(owner)
    for debate in (duel, replay):
        html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
        verdict = html.split('id="verdict"')[1].split("</section>")[0]
        assert (
            '<p class="contradiction" role="note"><strong>Scores contradict the verdict:</strong> '
            f"the judge named {MARCUS} the winner but scored {ADA} higher.</p>"
        ) in verdict


@pytest.mark.django_db(transaction=True)
def test_a_replays_page_shows_what_was_judged_to_the_owner_and_through_the_share_link(
    llm_server, personas, owner, client, run_to_rest
):
    duel = run_to_rest(new_duel(personas, owner=owner, turns=2).pk)
    replay = create_replay(duel, SeatChoice(personas[OKAFOR]), owner=owner, visibility=Debate.Visibility.UNLISTED)
    replay = run_to_rest(replay.pk)
    statements = list(Event.objects.filter(debate=duel, kind="TURN").order_by("ordinal"))

    client.force_login(owner)
    html = client.get(reverse("debate_detail", args=[replay.pk])).content.decode()
    assert "Judge replay" in html
    head = html.split('<section class="replay-turns">')[1].split("</section>")[0]
    assert f'<a href="{reverse("debate_detail", args=[duel.pk])}">debate #{duel.pk}</a>' in head
    assert f"<strong>{ADA}</strong> (for) against <strong>{MARCUS}</strong> (against)" in head
    assert "The 2 public turns judged" in head
    assert head.count('<article class="card kind-turn') == 2 and "· turn 2" in head
    for event in statements:
        assert event.content.split()[1] in head
    assert html.count("scores <strong>") == 2  # the judge's score cards, one per turn
    assert f"{ADA} <strong>" in html.split('id="verdict"')[1] and "Winner: <strong>" in html
    chart = html.split('id="score-chart"')[1].split("</section>")[0]
    assert ADA in chart and MARCUS in chart

    for kind in ("md", "json"):
        export = client.get(reverse("debate_export", args=[replay.pk, kind]))
        assert export.status_code == 200 and replay.winner in export.content.decode()

    client.logout()
    shared = client.get(reverse("debate_share", args=[replay.share_token]))
    assert shared.status_code == 200
    head = shared.content.decode().split('<section class="replay-turns">')[1].split("</section>")[0]
    # A stranger cannot open the private duel, so the page names it without a link.
    assert f"debate #{duel.pk}" in head and "<a href" not in head


@pytest.mark.django_db
def test_the_new_debate_form_does_not_offer_the_judge_format(client, owner):
    client.force_login(owner)
    html = client.get(reverse("debate_new")).content.decode()
    assert 'value="judge"' not in html and "Judge replay" not in html
    html = client.get(reverse("debate_new") + "?format=judge").content.decode()
    assert re.search(r'<input type="radio" name="format" value="duel"[^>]* checked', html)


@pytest.mark.django_db
def test_only_a_completed_duel_can_be_replayed(personas):
    duel = new_duel(personas)
    with pytest.raises(FormatError, match="Only a completed debate"):
        create_replay(duel, SeatChoice(personas[OKAFOR]))


def test_its_sides_judging_and_poll():
    # What it chose; tests/debates/formats/test_interface.py checks they agree with each other.
    fmt = get_format("judge")
    assert (fmt.sides, fmt.judging, fmt.judge_seat, fmt.poll) == ((), "in_debate", "judge", "")
