"""Deleting a debate while a Celery worker still writes its events, on PostgreSQL.

The worker's run stops only at its next write that finds the debate gone. Here it commits one event at the worst
moment: after the cascade has deleted the debate's events and before it deletes their seats. The seats' deferred
foreign-key check then fails at commit; the delete must collect again and finish, leaving nothing behind.
"""

import json

import pytest

pytestmark = pytest.mark.scaleout

WRITE_UNDER_THE_DELETE = """
import json, threading
from django.db import connection
from debates import services
from debates.models import Debate, Event, Seat

debate = Debate.objects.create(topic="Tea or coffee?", format="standard", status="running", options={"max_turns": 4})
seat = Seat.objects.create(debate=debate, key="p1", role="debater", name="Ada", order=1, system_prompt="Ada speaks.")
Event.objects.create(debate=debate, seat=seat, ordinal=1, kind="TURN", content="Tea.")
written = []

def a_worker_writes_an_event():
    # Another thread has a connection of its own, committing at once, as a worker process does.
    Event.objects.create(debate_id=debate.pk, seat_id=seat.pk, ordinal=2, kind="TURN", content="Coffee.")
    written.append(True)
    connection.close()

def before_the_seats_go(execute, sql, params, many, context):
    # The cascade has deleted the events by now; the seats and the debate are next.
    if sql.startswith('DELETE FROM "debates_seat"') and not written:
        writer = threading.Thread(target=a_worker_writes_an_event)
        writer.start()
        writer.join(10)
    return execute(sql, params, many, context)

with connection.execute_wrapper(before_the_seats_go):
    services.delete_debate(debate)
print(json.dumps({
    "written": len(written),
    "debates": Debate.objects.filter(pk=debate.pk).count(),
    "seats": Seat.objects.filter(debate_id=debate.pk).count(),
    "events": Event.objects.filter(debate_id=debate.pk).count(),
}))
"""


def test_a_debate_deleted_while_a_worker_commits_an_event_is_deleted_whole(stack):
    result = stack.manage("shell", "-c", WRITE_UNDER_THE_DELETE)
    assert "Traceback" not in result.stderr, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"written": 1, "debates": 0, "seats": 0, "events": 0}
