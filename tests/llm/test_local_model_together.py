"""A first try of ChaosLM on the real embedded SmolLM2: a room in auto mode, a duel and a two-match tournament
started together on the inline runner, as `make run` runs them, all share the one model and all complete.

The model answers as many calls at once as it has slots (one a core), and more than that are started here.
Before the line in chaoslm/llm/slots.py, a call's wait in the server's queue counted against its timeout, and
with this much started at once a call failed. Kept small (one turn, short replies): CI has two cores. In a file
of its own, listed in tests/conftest.py's SMOLLM2_FILES.
"""

import time

import pytest
from django.contrib.auth import get_user_model

from chaoslm import runner
from debates.models import Debate, Event
from debates.setup import SeatChoice, create_debate
from personas.models import Persona, import_personas
from rooms import services as rooms
from rooms import work as room_work
from rooms.models import Room
from tests.llm.smollm2 import SHORT
from tournaments import services as tournaments
from tournaments.models import Tournament
from tournaments.questions import QuestionSpec

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# As the other SmolLM2 tests: one answer on a busy two-core machine can take most of a minute, and the
# longest wait for the model here is several answers long; the wait must not count.
TIMEOUT = 120


@pytest.mark.usefixtures("local_endpoint")
def test_a_room_in_auto_mode_a_duel_and_a_tournament_started_together_all_complete(settings):
    settings.CHAOSLM_LLM_TIMEOUT = TIMEOUT
    cast = [("Pat", "debater", 32), ("Cy", "debater", 32), ("Jo", "judge", 160), ("Al", "chat", 32), ("Bo", "chat", 32)]
    import_personas(
        [(f"{name}.yaml", SHORT.format(name=name, role=role).replace("48", str(tokens))) for name, role, tokens in cast]
    )
    persona = {p.name: p for p in Persona.objects.all()}
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    room = Room.objects.create(title="Warm-up", owner=owner, response_delay=1, max_messages=2, max_wait=TIMEOUT)
    for name in ("Al", "Bo"):
        rooms.add_agent(room, persona[name])
    rooms.post_message(room, "olive", "What makes a debate worth watching?")
    duel = create_debate(
        format_name="duel",
        topic="Should homework be banned?",
        premise="Homework should be banned",
        seats={"a": SeatChoice(persona["Pat"]), "b": SeatChoice(persona["Cy"]), "judge": SeatChoice(persona["Jo"])},
        options={"turns": 1, "word_limit": 40},
        owner=owner,
    )
    cup = tournaments.create_tournament(
        name="Two matches",
        debaters=[tournaments.Contestant.of(persona["Pat"]), tournaments.Contestant.of(persona["Cy"])],
        judges=[tournaments.Contestant.of(persona["Jo"])],
        questions=[QuestionSpec("Should schools start later?", "Schools should start later", "for")],
        # A tournament's duel needs both sides to speak: two turns at least.
        options={"turns": 2, "word_limit": 40},
        concurrency=2,
    )

    rooms.set_mode(room, Room.Mode.AUTO)
    room_work.start_auto(room.pk)
    runner.submit("debate", duel.pk)
    tournaments.TOURNAMENT.start(cup)

    # A deadline only against a hang: alone on two cores this takes a few minutes, on a shared machine under
    # a load of 10 it took over half an hour.
    deadline = time.monotonic() + 7200
    while not (
        Room.objects.get(pk=room.pk).mode == Room.Mode.MANUAL
        and Debate.objects.get(pk=duel.pk).status not in (Debate.Status.PENDING, Debate.Status.RUNNING)
        and tournaments.TOURNAMENT.is_settled(cup.pk)
    ):
        assert time.monotonic() < deadline, "the room, the duel and the tournament did not all finish"
        time.sleep(0.5)
    runner.inline.wait_idle(120)

    room.refresh_from_db()
    assert room.pause_reason == "the message limit (2) was reached"
    assert room.messages.filter(kind="agent").count() == 2
    duel.refresh_from_db()
    assert duel.status == Debate.Status.COMPLETED, duel.error_text
    assert duel.winner in ("Pat", "Cy")
    cup.refresh_from_db()
    assert cup.status == Tournament.Status.COMPLETED
    matches = Debate.objects.filter(in_batch=True)
    assert matches.count() == 2
    assert all(m.status == Debate.Status.COMPLETED for m in matches), [m.error_text for m in matches]
    assert not Event.objects.filter(kind="ERROR").exists()
