"""Adding a code format is one module and one registry line (docs/adding-a-format.md), and nothing else: a
"point-counterpoint" format with a judge, defined here and registered only for these tests, runs through every face
a built-in format has, with no other file of the product knowing it: the new-debate page, the `debate` command, the
API, a tournament (its estimate, its judge panel, its ratings), the audience poll, the arena, the exports and the
live page. Each debate runs against the test LLM server."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from io import StringIO
from typing import Any

import pytest
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from api.tokens import create_token
from audience import votes
from batches.checks import Contestant
from chaoslm.runner import inline
from config.routing import websocket_urlpatterns
from debates.formats import FORMATS, LISTED, registered
from debates.formats.base import (
    PUBLIC,
    WORD_LIMIT,
    DebateConfig,
    Format,
    Plan,
    Record,
    SeatSpec,
    Side,
    StepBuilder,
)
from debates.formats.duel import JudgeChain, Statement
from debates.models import Debate
from personas.models import Persona, import_personas
from tests.batches.helpers import always_for, debater, questions, run_to_end
from tests.debates.formats.test_interface import assert_hooks_agree
from tournaments import design, results, services
from tournaments.models import Judgment, Match

pytestmark = pytest.mark.django_db(transaction=True)


# -- the module: debates/formats/point_counterpoint.py, as a developer would write it -----------------------------
POINT = "The motion is: {topic}\n\nMake your point for it in two sentences."
COUNTER = 'The motion is: {topic}\n\n{opponent} argued for it:\n"{point}"\n\nMake the counterpoint in two sentences.'

# The public statements in speaking order: (ordinal, seat, step).
SPEECHES = ((1, "point", "point"), (2, "counter", "counterpoint"))


def judge_slot(turn: int) -> int:
    """The judge's evaluation of statement `turn` (its score one after): 4 and 5, then 6 and 7."""
    return 2 + 2 * turn


class PointCounterpoint(Format):
    name = "point_counterpoint"
    title = "Point and counterpoint"
    description = "One speaker makes a point for the motion, the other answers it; a judge decides."
    seat_specs = (
        SeatSpec("point", "debater", "Point (for)", side="for"),
        SeatSpec("counter", "debater", "Counterpoint (against)", side="against"),
        SeatSpec("judge", "judge", "Judge", required=False),
    )
    option_specs = (WORD_LIMIT,)
    sides = (Side("for", "For", ("point",), "for"), Side("against", "Against", ("counter",), "against"))
    judging = "in_debate"
    judge_seat = "judge"
    poll = "sides"
    doing_words = {"point": "making the point", "counterpoint": "answering the point"}

    def statements(self, options: Mapping[str, Any]) -> int:
        return len(SPEECHES)

    def calls(self, options: Mapping[str, Any]) -> int:
        return 3 * len(SPEECHES) + 4  # each statement, the judge's evaluation and score of it, the verdict's four

    def step_title(self, step: str) -> str:
        return {"point": "The point", "counterpoint": "The counterpoint"}.get(step) or super().step_title(step)

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        build = StepBuilder(config, records)
        if 0 not in build.done:
            build.steps.append(self.header(config))
        word_limit = config.options.get("word_limit") or None
        if not config.is_ending:
            build.call("point", 1, "TURN", "point", POINT.format(topic=config.topic), visibility=PUBLIC)
            if 1 in build.done:
                opponent = config.seat("point")
                assert opponent is not None
                counter = COUNTER.format(topic=config.topic, opponent=opponent.name, point=build.done[1].content)
                build.call(
                    "counter", 2, "TURN", "counterpoint", counter, needs=(1,), visibility=PUBLIC, word_limit=word_limit
                )
        given = [self._statement(config, t, build.done) for t in range(1, len(SPEECHES) + 1)]
        statements = [s for s in given[: next((i for i, s in enumerate(given) if s is None), len(given))] if s]
        spoken = len(statements) if config.is_ending else len(SPEECHES)
        chain = self.judge_chain(config)
        if chain is None:
            return Plan(steps=tuple(build.steps), finished=config.is_ending or 2 in build.done)
        chain.steps(build, statements, spoken)
        return Plan(steps=tuple(build.steps), finished=chain.finished(build.done, spoken))

    def _statement(self, config: DebateConfig, turn: int, done: Mapping[int, Record]) -> Statement | None:
        ordinal, key, _ = SPEECHES[turn - 1]
        seat = config.seat(key)
        if ordinal not in done or seat is None:
            return None
        return Statement(turn=turn, key=key, name=seat.name, text=done[ordinal].content)

    def judge_chain(self, config: DebateConfig) -> JudgeChain | None:
        point, counter = config.seat("point"), config.seat("counter")
        if config.seat("judge") is None or point is None or counter is None:
            return None
        return JudgeChain(
            a=point.name, b=counter.name, premise=config.premise, turns=len(SPEECHES), slot=judge_slot, verdict_at=8
        )

    def outcome(self, config: DebateConfig, records: Sequence[Record]) -> dict[str, Any]:
        chain = self.judge_chain(config)
        names = {s.key: s.name for s in config.seats if s.key in ("point", "counter")}
        return chain.outcome(records, names) if chain else {}


# -- the registry line, for these tests only ---------------------------------------------------------------------
@pytest.fixture(autouse=True)
def point_counterpoint():
    with registered(PointCounterpoint()) as fmt:
        yield fmt
    assert PointCounterpoint.name not in FORMATS and PointCounterpoint.name not in LISTED
    inline.wait_idle()


PERSONA = "name: {name}\nrole: {role}\npersonality: {name} speaks plainly.\n"


@pytest.fixture
def people(people):
    import_personas(
        [
            ("p.yaml", PERSONA.format(name="Ada", role="debater")),
            ("c.yaml", PERSONA.format(name="Ben", role="debater")),
            ("j.yaml", PERSONA.format(name="Jo", role="judge") + "judging_criteria: Logic.\n"),
            ("k.yaml", PERSONA.format(name="Kit", role="judge") + "judging_criteria: Evidence.\n"),
        ]
    )
    return people


def persona(name: str) -> int:
    return Persona.objects.get(name=name).pk


def scripted(llm_server) -> None:
    """Each speaker's reply, and a judge who finds for the point."""
    llm_server.configure(
        rules=[
            {"match": "Make your point for it", "reply": "Trains beat planes on short trips."},
            {"match": "Make the counterpoint", "reply": "Planes still win across oceans."},
            *always_for(["Ada", "Ben", "Alice", "Bob"]),
        ]
    )


def assert_ran(debate: Debate, llm_server) -> None:
    """The debate ran the format's protocol: its prompts, in order, and the judge's verdict for the point."""
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    prompts = [r.messages[-1]["content"] for r in llm_server.requests]
    assert prompts[0] == POINT.format(topic=debate.topic)
    assert COUNTER.format(topic=debate.topic, opponent="Ada", point="Trains beat planes on short trips.") in prompts
    assert len(prompts) == PointCounterpoint().calls({}) == 10
    turns = list(debate.events.filter(kind="TURN").order_by("ordinal").values_list("step", "seat__name", "content"))
    assert turns == [
        ("point", "Ada", "Trains beat planes on short trips."),
        ("counterpoint", "Ben", "Planes still win across oceans."),
    ]
    assert debate.winner == "Ada" and debate.events.filter(kind="VERDICT").exists()


# -- the faces -----------------------------------------------------------------------------------------------------
def test_its_hooks_agree_as_every_built_in_formats_do(point_counterpoint):
    assert_hooks_agree(point_counterpoint)


def test_the_new_debate_page_offers_it_and_starts_it(people, llm_server, client):
    client.force_login(people["owner"])
    page = client.get(reverse("debate_new")).content.decode()
    assert re.search(
        r'<input type="radio" name="format" value="point_counterpoint"[^>]*>\s*'
        r"<label [^>]*>Point and counterpoint</label>",
        page,
    )
    fields = client.get(reverse("debate_new"), {"format": "point_counterpoint"}).content.decode()
    assert 'name="seat_point"' in fields and 'name="seat_counter"' in fields and 'name="seat_judge"' in fields
    assert "Point (for)" in fields and "Counterpoint (against)" in fields
    # The formats' pages list it and give its size.
    listing = client.get(reverse("format_list")).content.decode()
    assert reverse("format_detail", args=["point_counterpoint"]) in listing
    about = client.get(reverse("format_detail", args=["point_counterpoint"])).content.decode()
    assert "exactly 10 LLM calls" in about

    scripted(llm_server)
    response = client.post(
        reverse("debate_new"),
        {
            "format": "point_counterpoint",
            "topic": "Trains or planes?",
            "visibility": "public",
            "audience_poll": "on",
            "seat_point": persona("Ada"),
            "seat_counter": persona("Ben"),
            "seat_judge": persona("Jo"),
            "option_word_limit": 0,
        },
    )
    debate = Debate.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("debate_detail", args=[debate.pk])
    inline.wait_idle()
    debate.refresh_from_db()
    assert debate.format == "point_counterpoint"
    assert_ran(debate, llm_server)

    # The page: each statement's card names its step, the verdict box its winner, the running scores are drawn.
    page = Client().get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert '<p class="muted">Point and counterpoint · ' in page
    assert '<span class="muted">· point</span>' in page and '<span class="muted">· counterpoint</span>' in page
    assert "Running scores" in page and "Planes still win across oceans." in page

    # The audience poll lists its two sides by their seats' speakers.
    poll = votes.poll_of(debate)
    assert poll is not None and [(key, label) for key, label in poll.options] == [
        ("point", "Ada (for)"),
        ("counter", "Ben (against)"),
        ("undecided", "Undecided"),
    ]

    # The exports: each statement under its step's title.
    markdown = client.get(reverse("debate_export", args=[debate.pk, "md"])).content.decode()
    assert "**Format:** Point and counterpoint" in markdown
    assert "### Ada — The point\n\nTrains beat planes on short trips.\n\n### Ben — The counterpoint\n\n" in markdown
    assert "**Winner:** Ada" in markdown
    exported = json.loads(client.get(reverse("debate_export", args=[debate.pk, "json"])).content)
    assert exported["format"] == "point_counterpoint"
    assert [e["step"] for e in exported["events"] if e["kind"] == "TURN"] == ["point", "counterpoint"]

    # The live page: a socket opening on it catches up with the same cards, their steps named.
    async def catch_up() -> str:
        communicator = WebsocketCommunicator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns)), f"/ws/debates/{debate.pk}/?since=0"
        )
        communicator.scope["user"] = people["owner"]
        connected, _ = await communicator.connect()
        assert connected
        first = await communicator.receive_from()
        await communicator.disconnect()
        return first

    pushed = asyncio.run(catch_up())
    assert '<span class="muted">· point</span>' in pushed and "Planes still win across oceans." in pushed


def test_the_debate_command_runs_it(people, llm_server):
    scripted(llm_server)
    out = StringIO()
    call_command(
        "debate",
        "point_counterpoint",
        "--topic",
        "Trains or planes?",
        "--seat",
        "point=Ada",
        "--seat",
        "counter=Ben",
        "--judge",
        "Jo",
        stdout=out,
    )
    debate = Debate.objects.get()
    assert_ran(debate, llm_server)
    text = out.getvalue()
    assert "Trains beat planes on short trips." in text and "Planes still win across oceans." in text
    assert "counterpoint" in text and "Winner: Ada" in text


def test_the_api_lists_it_and_starts_it(people, llm_server):
    _, raw = create_token(people["owner"], "plugin", read_only=False)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    listed = api.get("/api/v1/formats").json()
    mine = next(f for f in listed if f["name"] == "point_counterpoint")
    assert mine["title"] == "Point and counterpoint"
    assert [s["key"] for s in mine["seats"]] == ["point", "counter", "judge"]

    scripted(llm_server)
    body = {
        "format": "point_counterpoint",
        "topic": "Trains or planes?",
        "seats": {"point": persona("Ada"), "counter": persona("Ben"), "judge": persona("Jo")},
    }
    response = api.post("/api/v1/debates", body, content_type="application/json")
    assert response.status_code == 201, response.content
    inline.wait_idle()
    answer = api.get(f"/api/v1/debates/{response.json()['id']}").json()
    assert answer["format"] == "point_counterpoint" and answer["verdict"]["winner"] == "Ada"
    assert_ran(Debate.objects.get(pk=answer["id"]), llm_server)


def test_a_tournament_runs_it_with_a_judge_panel_ratings_and_an_arena(people, llm_server, client):
    assert "point_counterpoint" in design.formats()
    assert "point_counterpoint" in services.offered_formats(people["owner"])
    client.force_login(people["owner"])
    form = client.get(reverse("tournament_new")).content.decode()
    assert 'value="point_counterpoint"' in form

    scripted(llm_server)
    tournament = services.create_tournament(
        name="Transit cup",
        debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[Contestant.of(Persona.objects.get(name=n)) for n in ("Jo", "Kit")],
        questions=questions(1),
        options={},
        sides="both",
        formats=["point_counterpoint"],
        owner=people["owner"],
        visibility="public",
        arena=True,
    )
    run_to_end(tournament)
    assert tournament.status == "completed"
    matches = Match.objects.select_related("debate").order_by("pk")
    assert [m.debate.format for m in matches] == ["point_counterpoint"] * 2
    # The FOR entrant makes the point; the first judge sits inside, the second replays the two statements.
    for match in matches:
        seats = dict(match.debate.seats.values_list("key", "name"))
        assert seats == {"point": match.debater_for.name, "counter": match.debater_against.name, "judge": "Jo"}
    inside = Judgment.objects.filter(judge__name="Jo")
    assert all(j.in_debate for j in inside)
    replays = Judgment.objects.filter(judge__name="Kit").select_related("debate")
    assert {j.debate.options["source_format"] for j in replays} == {"point_counterpoint"}
    verdicts = results.verdicts(tournament)
    assert sorted((v.judge, v.winner, v.format) for v in verdicts) == [
        ("Jo", "for", "point_counterpoint"),
        ("Jo", "for", "point_counterpoint"),
        ("Kit", "for", "point_counterpoint"),
        ("Kit", "for", "point_counterpoint"),
    ]
    page = Client().get(reverse("tournament_detail", args=[tournament.pk])).content.decode()
    assert "Alice" in page and "Bob" in page
    matches_csv = client.get(reverse("tournament_export", args=[tournament.pk, "matches.csv"])).content.decode()
    rows = matches_csv.splitlines()[1:]
    assert len(rows) == 4 and all(",completed,for," in row for row in rows)  # each judge of each match
    report = json.loads(client.get(reverse("tournament_export", args=[tournament.pk, "report.json"])).content)
    assert "point_counterpoint" in json.dumps(report)
    ratings = client.get(reverse("tournament_export", args=[tournament.pk, "ratings.csv"])).content.decode()
    # The FOR side won every verdict, and each argued it once: level ratings.
    assert sorted(row.split(",")[1:3] for row in ratings.splitlines()[1:]) == [["Alice", "0.0"], ["Bob", "0.0"]]

    # The arena: a match, blind, its FOR speaker as Debater 1.
    arena = Client().get(reverse("arena")).content.decode()
    assert "Who argued better?" in arena and "Alice" not in arena and "Bob" not in arena
    assert "Trains beat planes on short trips." in arena
