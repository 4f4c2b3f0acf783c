"""A room in auto mode on a Celery worker over PostgreSQL and Redis, its worker SIGKILLed again and again:
no agent answers twice, no answer is lost."""

import random
import time

import psycopg
import pytest

pytestmark = pytest.mark.scaleout

HOLD = 1.5  # CHAOSLM_ROOM_HOLD: how long a killed worker's hold on the room lasts
TURNS = 12

CREATE = """
from django.contrib.auth.models import User
from personas.models import Persona
from rooms import services
from rooms.models import Room
owner, _ = User.objects.get_or_create(username="olive")
personas = [Persona.objects.get(name=n) for n in ("Ada Sterling", "Marcus Vale", "Mira")]
room = services.create_room(owner, "{title}", "private", personas)
Room.objects.filter(pk=room.pk).update(response_delay=1, max_messages={turns})
room.refresh_from_db()
services.post_message(room, "olive", "What should cities do about cars?")
services.set_mode(room, Room.Mode.AUTO)
print(room.pk)
"""


def create_room(stack, title):
    out = stack.manage("shell", "-c", CREATE.format(title=title, turns=TURNS)).stdout
    return int(out.strip().splitlines()[-1])


def sweep(stack):
    """What Celery beat's sweep does: start the loop of every room in auto mode that no process holds."""
    stack.manage("shell", "-c", "from rooms.work import resume_auto; resume_auto()")


def answers(stack, room_id):
    with psycopg.connect(stack.env["DATABASE_URL"]) as connection:
        rows = connection.execute(
            "SELECT author, content FROM rooms_roommessage WHERE room_id = %s AND kind = 'agent' ORDER BY id",
            [room_id],
        ).fetchall()
        mode = connection.execute("SELECT mode FROM rooms_room WHERE id = %s", [room_id]).fetchone()[0]
    return rows, mode


def wait_done(stack, room_id, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows, mode = answers(stack, room_id)
        if mode == "manual":
            return rows
        time.sleep(0.2)
    raise AssertionError(f"room {room_id} did not finish in {timeout}s")


def test_a_room_whose_worker_is_killed_again_and_again_has_every_turn_answered_once(stack, _llm_server_process):
    _llm_server_process.configure(latency=0.3)
    stack.env.update({"CHAOSLM_ROOM_HOLD": str(HOLD), "CHAOSLM_ROOM_POLL": "0.2"})
    reference_id = create_room(stack, "Reference")
    sweep(stack)
    worker = stack.start_worker("ref")
    reference = wait_done(stack, reference_id)
    stack.kill(worker)
    assert [author for author, _ in reference] == ["Ada Sterling", "Marcus Vale", "Mira"] * (TURNS // 3)

    room_id = create_room(stack, "Killed")
    rng = random.Random(20261124)
    kills = 0
    while kills < 5:
        sweep(stack)  # before the worker starts, so a slow start-up cannot let it run the room before a look
        worker = stack.start_worker()
        start = len(answers(stack, room_id)[0])
        target = start + rng.randint(1, 2)
        deadline = time.monotonic() + 30
        rows, mode = answers(stack, room_id)
        while mode == "auto" and len(rows) < target and time.monotonic() < deadline:
            time.sleep(rng.uniform(0.02, 0.5))
            rows, mode = answers(stack, room_id)
        if mode != "auto":
            break
        stack.kill(worker)  # SIGKILL, mid-room: no cleanup runs, its hold is left to lapse
        kills += 1
        time.sleep(HOLD + 0.2)
    assert kills == 5, "the room finished before its worker could be killed five times"
    sweep(stack)
    stack.start_worker("final")
    finished = wait_done(stack, room_id)
    assert finished == reference  # every turn answered, once, by the agent whose turn it was
