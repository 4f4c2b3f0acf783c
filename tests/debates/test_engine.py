"""The engine running duels against the test server over real HTTP, with the database."""

import asyncio
import json
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from chaoslm.llm import ChatResult
from debates.engine import Observer, run_debate
from debates.models import Debate, Event
from debates.privacy import Access
from debates.setup import SeatChoice, create_debate
from debates.transcripts import as_markdown
from personas.models import import_personas

pytestmark = pytest.mark.django_db(transaction=True)

PERSONAS = Path(__file__).resolve().parents[2] / "personas" / "samples"


@pytest.fixture
def personas():
    files = ["ada-sterling.yaml", "marcus-vale.yaml", "judge-okafor.yaml"]
    saved = import_personas([(f, (PERSONAS / f).read_text()) for f in files])
    return {p.name: p for p in saved}


def new_duel(personas, turns=6, judge=True, premise="Cities should ban private cars"):
    seats = {"a": SeatChoice(personas["Ada Sterling"]), "b": SeatChoice(personas["Marcus Vale"])}
    if judge:
        seats["judge"] = SeatChoice(personas["Judge Ines Okafor"])
    return create_debate(
        format_name="duel",
        topic="Should cities ban private cars?",
        premise=premise,
        seats=seats,
        options={"turns": turns},
    )


def transcript(debate_id):
    return [
        (e.ordinal, e.kind, e.step, e.seat.key if e.seat else None, e.prompt, e.content, e.data)
        for e in Event.objects.filter(debate_id=debate_id).select_related("seat")
    ]


def seat_of(request, debate):
    return next(s.key for s in debate.seats.all() if s.system_prompt == request.system)


def test_a_full_duel_makes_thirty_calls_and_reaches_a_verdict(llm_server, personas, run_to_rest):
    debate = new_duel(personas)
    finished = run_to_rest(debate.pk)
    assert finished.status == Debate.Status.COMPLETED
    assert len(llm_server.requests) == 30
    events = list(Event.objects.filter(debate=debate))
    assert [e.ordinal for e in events] == list(range(31))
    assert [e.kind for e in events].count("TURN") == 6
    assert [e.kind for e in events].count("SCORE") == 6
    debate.refresh_from_db()
    assert debate.winner in ("Ada Sterling", "Marcus Vale")
    assert set(debate.scores) == {"Ada Sterling", "Marcus Vale"}
    assert debate.premise_upheld == (debate.winner == "Ada Sterling")
    assert debate.announcement == events[-1].content and events[-1].kind == "VERDICT"
    assert all(e.tokens_in > 0 and e.tokens_out > 0 for e in events[1:])
    # Each request is the seat's own history, exactly as the event prompts and replies say.
    judge_requests = [r for r in llm_server.requests if seat_of(r, debate) == "judge"]
    assert len(judge_requests) == 16
    assert judge_requests[0].messages[0]["content"] == personas["Judge Ines Okafor"].spec().system_prompt("judge")


def test_the_judge_never_sees_private_debater_text_and_debaters_never_see_the_judge(llm_server, personas, run_to_rest):
    debate = new_duel(personas)
    run_to_rest(debate.pk)
    events = list(Event.objects.filter(debate=debate).select_related("seat"))
    private = [e.content for e in events if e.seat and e.seat.key in "ab" and e.kind in ("PLAN", "THINK")]
    judged = [e.content for e in events if e.seat and e.seat.key == "judge" and e.step != "confirm_winner"]
    assert private and judged
    for request in llm_server.requests:
        text = json.dumps(request.messages)
        if seat_of(request, debate) == "judge":
            assert not any(p in text for p in private)
        else:
            assert not any(j in text for j in judged)


def test_a_duel_without_a_judge_has_no_judge_calls_and_no_verdict(llm_server, personas, run_to_rest):
    debate = run_to_rest(new_duel(personas, judge=False).pk)
    assert debate.status == Debate.Status.COMPLETED
    assert len(llm_server.requests) == 14
    assert not Event.objects.filter(debate=debate, kind__in=["SCORE", "VERDICT"]).exists()
    assert debate.winner == ""


class StopAfter(Observer):
    """Cancels the run once `count` events are saved: an interruption at an arbitrary step."""

    def __init__(self, count):
        self.count = count
        self.saved = 0

    async def event_saved(self, debate, event):
        self.saved += 1
        if self.saved == self.count:
            raise asyncio.CancelledError


@pytest.mark.parametrize("stop_after", [1, 2, 5, 9, 16, 27, 29])
def test_an_interrupted_duel_resumes_to_the_same_transcript(llm_server, personas, stop_after, run_to_rest):
    reference = new_duel(personas)
    run_to_rest(reference.pk)
    expected = [row[1:] for row in transcript(reference.pk)]

    debate = new_duel(personas)
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(run_debate(debate.pk, StopAfter(stop_after)))
    debate.refresh_from_db()
    assert debate.status == Debate.Status.INTERRUPTED
    assert Event.objects.filter(debate=debate).count() == stop_after
    resumed = run_to_rest(debate.pk)
    assert resumed.status == Debate.Status.COMPLETED
    assert [row[1:] for row in transcript(debate.pk)] == expected
    resumed.refresh_from_db()
    reference.refresh_from_db()
    assert (resumed.winner, resumed.scores) == (reference.winner, reference.scores)


def test_a_step_persisted_twice_lands_once(llm_server, personas, run_to_rest):
    from debates.engine import _load, _persist
    from debates.formats import get_format

    debate = new_duel(personas)
    run_to_rest(debate.pk)
    table = _load(debate.pk)
    plan_a = next(s for s in get_format("duel").next_steps(table.config(False), []).steps if s.ordinal == 1)
    original = Event.objects.get(debate=debate, ordinal=1)
    # A redelivered task finishing the same step again, with another reply.
    event = _persist(table.debate, table.seats["a"], plan_a, ChatResult(text="a second, late answer"), {})
    assert event.pk == original.pk and event.content == original.content
    assert Event.objects.filter(debate=debate, ordinal=1).count() == 1


def test_a_failed_call_leaves_an_error_debate_with_everything_kept_and_a_partial_transcript(
    llm_server, personas, settings, run_to_rest
):
    llm_server.configure(rules=[{"match": "Give Marcus Vale an initial score", "fault": "500"}])
    debate = run_to_rest(new_duel(personas).pk)
    assert debate.status == Debate.Status.ERROR
    assert "answered HTTP 500 after 4 tries" in debate.error_text
    error = Event.objects.get(debate=debate, kind="ERROR")
    assert error.ordinal == 10 and error.data["step"] == "score_first" and error.data["seat"] == "judge"
    kept = Event.objects.filter(debate=debate).exclude(kind="ERROR")
    assert {0, 1, 2, 3, 4, 5, 6, 7, 8, 9} <= set(kept.values_list("ordinal", flat=True))
    partial = Path(settings.CHAOSLM_TRANSCRIPTS_DIR) / f"partial-{debate.pk}.md"
    assert partial.exists()
    text = partial.read_text()
    assert "**Error:**" in text and "This debate stopped with an error" in text
    assert (Path(settings.CHAOSLM_TRANSCRIPTS_DIR) / f"partial-{debate.pk}.json").exists()

    # Retry once the endpoint works again: the error is replaced and the debate completes.
    llm_server.configure(rules=[])
    retried = run_to_rest(debate.pk)
    assert retried.status == Debate.Status.COMPLETED and retried.error_text == ""
    assert not Event.objects.filter(debate=debate, kind="ERROR").exists()
    assert Event.objects.filter(debate=debate).count() == 31


def test_scores_that_stay_invalid_fall_back_without_failing_the_debate(llm_server, personas, run_to_rest):
    llm_server.configure(
        rules=[
            {"match": "score for Ada Sterling|Give Ada Sterling an initial score", "reply": "About a seven, I think."},
            {"match": "Now express that verdict", "reply": '{"winner": "Someone else", "scores": {}}'},
        ]
    )
    debate = run_to_rest(new_duel(personas, turns=4).pk)
    assert debate.status == Debate.Status.COMPLETED
    ada_scores = Event.objects.filter(debate=debate, kind="SCORE", data__for="a")
    assert ada_scores.count() == 2
    assert all(e.data["fallback"] and "score" not in e.data for e in ada_scores)
    assert "Ada Sterling" not in debate.scores  # no valid score for her, none invented
    confirmed = Event.objects.get(debate=debate, step="confirm_winner").content
    assert debate.winner == confirmed.strip()
    # 22 calls for four turns, plus two more tries for each of the three steps whose JSON stayed invalid.
    assert len(llm_server.requests) == 22 + 3 * 2


class EndAfterOrdinal(Observer):
    def __init__(self, ordinal):
        self.ordinal = ordinal

    async def event_saved(self, debate, event):
        if event.ordinal == self.ordinal:
            await sync_to_async(Debate.objects.filter(pk=debate.pk).update)(is_ending=True)


def test_ending_early_skips_to_the_verdict_on_the_turns_so_far(llm_server, personas):
    debate = asyncio.run(run_debate(new_duel(personas).pk, EndAfterOrdinal(8)))
    assert debate.status == Debate.Status.COMPLETED
    steps = list(Event.objects.filter(debate=debate).values_list("ordinal", "step"))
    turns = [o for o, s in steps if s in ("opening", "respond", "respond_final")]
    assert turns[:2] == [4, 8] and len(turns) <= 3
    assert steps[-4:] == [(27, "deliberate"), (28, "confirm_winner"), (29, "verdict_json"), (30, "announce")]
    assert debate.winner


def test_markdown_export_shows_the_debate(llm_server, personas, run_to_rest):
    debate = run_to_rest(new_duel(personas, turns=2).pk)
    text = as_markdown(debate)
    assert text.startswith("# Should cities ban private cars?")
    assert "**Premise:** Cities should ban private cars" in text
    assert f"**Winner:** {debate.winner}" in text
    hidden = as_markdown(debate, access=Access(thinking=False, prompts=False))
    assert "(private)" in text and "(private)" not in hidden


def test_what_a_watcher_is_pushed_ends_as_what_a_fresh_page_shows(llm_server, personas):
    from channels.layers import get_channel_layer
    from django.template.loader import render_to_string

    from chaoslm import live
    from debates.broadcast import DebateBroadcaster
    from debates.selectors import page_state

    debate = new_duel(personas, turns=4)
    layer = get_channel_layer()

    async def watch_and_run():
        channel = await layer.new_channel()
        await live.join(live.debate_group(debate.pk), channel)
        await run_debate(debate.pk, DebateBroadcaster(debate.pk))
        pushes = []
        while True:
            try:
                pushes.append((await asyncio.wait_for(layer.receive(channel), 0.5))["html"])
            except TimeoutError:
                return "".join(pushes)

    html = asyncio.run(watch_and_run())
    state = page_state(Debate.objects.get(pk=debate.pk))

    def panels(element_id):
        return [
            f'<section id="{element_id}"' + part.split("</section>")[0]
            for part in html.split(f'<section id="{element_id}"')[1:]
        ]

    charts = panels("score-chart")
    # One chart push per score as it lands (each with one more dot), then the final state.
    dots = [chart.count("<circle") for chart in charts]
    assert dots[:5] == [0, 1, 2, 3, 4]
    fresh_chart = render_to_string("partials/score_chart.html", {**state, "oob": True})
    # The last push from the events as they landed, and the last of all (the finished debate's).
    assert charts[-2] == charts[-1] == fresh_chart.split("</section>")[0]
    fresh_usage = render_to_string("partials/usage.html", {**state, "oob": True})
    assert panels("usage")[-2] == panels("usage")[-1] == fresh_usage.split("</section>")[0]
    assert f"{state['tokens_out']} out" in fresh_usage and state["tokens_out"] > 0
    for event in state["events"]:
        assert f'id="ev-{event.ordinal}"' in html


def test_an_unwatched_debate_draws_nothing_and_a_page_joining_midway_ends_as_a_fresh_page(
    llm_server, personas, monkeypatch
):
    from channels.layers import get_channel_layer
    from django.template.loader import render_to_string

    from chaoslm import live
    from debates import broadcast
    from debates.selectors import page_state

    drawn: list[str] = []
    monkeypatch.setattr(
        broadcast, "render_to_string", lambda name, *a, **k: drawn.append(name) or render_to_string(name, *a, **k)
    )
    debate = new_duel(personas, turns=2)
    layer = get_channel_layer()
    drawn_unwatched: list[str] = []

    class JoinsAtTheSixthEvent(broadcast.DebateBroadcaster):
        saved = 0

        async def event_saved(self, debate, event):
            self.saved += 1
            if self.saved == 6:
                drawn_unwatched.extend(drawn)
                await live.join(self.group, self.channel)
            await super().event_saved(debate, event)

    async def run():
        observer = JoinsAtTheSixthEvent(debate.pk)
        observer.channel = await layer.new_channel()
        await run_debate(debate.pk, observer)
        pushes = []
        while True:
            try:
                pushes.append((await asyncio.wait_for(layer.receive(observer.channel), 0.5))["html"])
            except TimeoutError:
                return "".join(pushes)

    html = asyncio.run(run())
    assert drawn_unwatched == []  # five events in, with no page watching: no chart, usage or status drawn
    state = page_state(Debate.objects.get(pk=debate.pk))
    fresh_chart = render_to_string("partials/score_chart.html", {**state, "oob": True}).split("</section>")[0]
    fresh_usage = render_to_string("partials/usage.html", {**state, "oob": True}).split("</section>")[0]
    # The state was loaded when the page joined, then kept from the events: it ends as a fresh page's.
    assert html.rsplit('<section id="score-chart"', 1)[1].split("</section>")[0] in fresh_chart
    assert html.rsplit('<section id="usage"', 1)[1].split("</section>")[0] in fresh_usage
    assert f"{state['tokens_out']} out" in fresh_usage and state["tokens_out"] > 0


@pytest.mark.parametrize(
    ("in_batch", "with_owner"),
    [(False, True), (False, False), (True, True)],
    ids=["owners-page-opening", "nobody-watching", "tournament-match"],
)
def test_what_is_streamed_is_what_a_page_could_show_as_it_is_written(
    llm_server, personas, django_user_model, in_batch, with_owner
):
    """A debate's page shows a step as it is written, except the judge's internal notes and JSON scores:
    those are asked for whole, which costs less than half the CPU of reading a stream. A debate no page
    watches streams nothing and draws no card (a tournament's match, a command-line run), except while the
    page of the owner who just started it is opening."""

    from chaoslm import live
    from debates.broadcast import DebateBroadcaster

    debate = new_duel(personas, turns=2)
    owner = django_user_model.objects.create_user("owner", password="x") if with_owner else None
    Debate.objects.filter(pk=debate.pk).update(in_batch=in_batch, owner=owner)
    assert asyncio.run(run_debate(debate.pk, DebateBroadcaster(debate.pk))).status == Debate.Status.COMPLETED
    streamed = {request.last_user: bool(request.body.get("stream")) for request in llm_server.requests}
    calls = Event.objects.filter(debate=debate, seat__isnull=False).exclude(prompt="").select_related("seat")
    seen = {(e.kind, e.seat.key, streamed[e.prompt]) for e in calls}
    shown = {("PLAN", "a"), ("PLAN", "b"), ("THINK", "a"), ("THINK", "b"), ("TURN", "a"), ("TURN", "b")}
    shown |= {("THINK", "judge"), ("VERDICT", "judge")}
    hidden = {("SCORE", "judge"), ("INTERNAL", "judge")}
    # On the embedded layer and on Redis alike, the broadcaster knows that no page is in the debate's group.
    assert not live.has_audience(live.debate_group(debate.pk))
    unwatched = in_batch or not with_owner
    assert seen == {(*call, not unwatched) for call in shown} | {(*call, False) for call in hidden}
    # Nor are its cards drawn as its events are saved: the first page that shows them draws them.
    assert {bool(html) for html in Event.objects.filter(debate=debate).values_list("html", flat=True)} == {
        not unwatched
    }
