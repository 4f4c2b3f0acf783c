"""A debate whose speeches give answers tallies them in its status line while it runs: each seat's latest
answer, the same answers together (numbers by value), most given first; an abstention left out; nothing for a
format that gives no answers."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from debates.models import Debate, Event, Seat
from debates.status import status_line

pytestmark = pytest.mark.django_db

CARD = (Path(__file__).resolve().parents[2] / "cards" / "multi-agent-debate.yaml").read_text()
PERSONAS = Path(__file__).resolve().parents[2] / "personas" / "samples"


def debate_with(answers, **fields):
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    debate = Debate.objects.create(topic="What is 17 times 23?", owner=owner, status="running", **fields)
    seats = {
        key: Seat.objects.create(debate=debate, key=key, role="debater", name=name, order=i)
        for i, (key, name) in enumerate([("agent_1", "Ada"), ("agent_2", "Bob"), ("agent_3", "Cy")])
    }
    for ordinal, (seat, answer) in enumerate(answers, start=1):
        data = {"answer_kind": "text", "answer": answer} if answer is not None else {"answer_kind": "text"}
        if answer is None:
            data["fallback"] = True
        Event.objects.create(debate=debate, ordinal=ordinal, seat=seats[seat], kind="TURN", step="answer", data=data)
    return debate


def test_the_latest_answers_are_tallied_most_given_first():
    # Round 1: Ada 391, Bob 381, Cy 391.0; round 2: Bob comes round, Cy's reply gives no valid answer.
    debate = debate_with(
        [("agent_1", "391"), ("agent_2", "381"), ("agent_3", "391.0"), ("agent_2", "391"), ("agent_3", None)],
        format="multi-agent-debate",
        card_source=CARD,
    )
    assert status_line(debate).details == ("Answers so far: 391 (Ada, Bob, Cy)",)
    page = Client()
    page.force_login(debate.owner)
    html = page.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert '<span class="muted">· Answers so far: 391 (Ada, Bob, Cy)</span>' in html


def test_a_split_names_each_answer_with_its_givers():
    debate = debate_with(
        [("agent_1", "Paris"), ("agent_2", "Lyon"), ("agent_3", "paris")],
        format="multi-agent-debate",
        card_source=CARD,
    )
    assert status_line(debate).details == ("Answers so far: Paris (Ada, Cy), Lyon (Bob)",)


def test_a_format_without_answers_says_none_and_a_finished_debate_neither():
    assert status_line(debate_with([("agent_1", "42")], format="duel")).details == ()
    Debate.objects.all().delete()
    get_user_model().objects.all().delete()
    done = debate_with([("agent_1", "42")], format="multi-agent-debate", card_source=CARD)
    done.status = "completed"
    assert status_line(done).details == ()


@pytest.mark.django_db(transaction=True)
def test_a_watched_debate_of_answers_runs_to_the_end_its_status_pushes_tallying_them(llm_server):
    # The tally was read from the database inside the engine's event loop: every watched debate of a format that
    # gives answers failed at its first speech (SynchronousOnlyOperation).
    import asyncio
    from dataclasses import replace

    from channels.layers import get_channel_layer

    from chaoslm import live
    from debates.broadcast import DebateBroadcaster
    from debates.engine import run_debate
    from debates.setup import SeatChoice, create_debate
    from personas.models import import_personas

    llm_server.configure(rules=[{"match": '"answer"', "reply": '{"reasoning": "17 * 23", "answer": "391"}'}])
    ada = import_personas([("ada.yaml", (PERSONAS / "ada-sterling.yaml").read_text())])[0]
    debate = create_debate(
        format_name="multi-agent-debate",
        card_source=CARD,
        topic="What is 17 times 23?",
        seats={f"agent_{i}": SeatChoice(spec=replace(ada.spec(), name=f"Ada {i}")) for i in (1, 2, 3)},
        options={"rounds": 1},
    )
    layer = get_channel_layer()

    async def watch_and_run() -> str:
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
    debate.refresh_from_db()
    assert debate.status == Debate.Status.COMPLETED, debate.error
    assert "Answers so far: 391 (" in html
