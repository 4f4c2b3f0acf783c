"""A room's live parts: the context meter follows each message as a full count would, and the broadcaster pushes
from what the loop holds in memory (no query), taking away the card of an answer dropped when its agent left."""

import asyncio

import pytest

from chaoslm.llm import estimate_tokens
from rooms.broadcast import RoomBroadcaster
from rooms.context import ContextMeter, history
from rooms.models import RoomMessage
from rooms.table import load_room

pytestmark = pytest.mark.django_db(transaction=True)


def _say(room, agent, text, active=True):
    return RoomMessage.objects.create(
        room=room,
        kind="agent" if agent else "user",
        agent=agent,
        author=agent.name if agent else "olive",
        content=text,
        active=active,
    )


def test_the_context_meter_follows_each_message_as_a_full_count_would(room):
    alice, bob, _ = list(room.agents.all())
    table = load_room(room.pk)
    meter = ContextMeter(table.agents, {a.pk: 1000 for a in table.agents}, [])
    said = [
        _say(room, None, "Hello all, a long first message " * 3),
        _say(room, alice, "Hi"),
        _say(room, bob, "Hello"),
        _say(room, bob, "And more"),
        _say(room, None, "Left out", active=False),
        _say(room, alice, "x" * 37),
    ]
    for message in said:
        meter.add(message)
        for agent in table.agents:
            assert meter.tokens(agent.pk) == estimate_tokens(history(said[: said.index(message) + 1], agent))


def test_the_room_broadcaster_pushes_from_memory(room, django_assert_max_num_queries):
    alice = room.agents.get(name="Alice")
    table = load_room(room.pk)
    broadcaster = RoomBroadcaster(room.pk)
    broadcaster.loaded(table)
    message = _say(room, alice, "Hello")

    async def push() -> str:
        await broadcaster.message_saved(table.room, message)
        await broadcaster.countdown(table.room, 3)
        pushed = "".join(item[1] for item in broadcaster.outbox.items if item[0] == "html")
        assert broadcaster.outbox.sender is not None
        broadcaster.outbox.sender.cancel()
        return pushed

    with django_assert_max_num_queries(0):
        pushed = asyncio.run(push())
    assert 'id="msg-' in pushed and "Alice" in pushed and pushed.count('id="room-status"') == 2
    assert "Auto mode" not in pushed and "agent-label" in pushed


def test_the_room_broadcaster_takes_away_the_card_of_an_answer_dropped_when_its_agent_left(room):
    alice, bob = room.agents.get(name="Alice"), room.agents.get(name="Bob")
    table = load_room(room.pk)
    broadcaster = RoomBroadcaster(room.pk)
    broadcaster.loaded(table)

    async def push() -> list[str]:
        broadcaster.started(table.room, alice)
        broadcaster.started(table.room, bob)
        broadcaster.dropped(table.room, alice)
        pushed = [item[1] for item in broadcaster.outbox.items if item[0] == "html"]
        broadcaster.outbox.sender.cancel()
        return pushed

    pushed = asyncio.run(push())
    assert f'data-remove="think-{alice.pk}"' in pushed[-2]
    assert 'id="room-status"' in pushed[-1]
    writing = pushed[-1].split('class="writing">')[1].split("</span>")[0]
    assert writing == "· Bob is writing"
    assert 'aria-label="Remove Bob"' in pushed[-1] and 'aria-label="Remove Alice"' not in pushed[-1]
