"""Room orchestration with summaries on: the CPU an auto turn costs, apart from the model, at 20 and 1,000 messages.

A room of 3 agents holds N messages. At 20 nothing is folded yet; at 1,000 a long run with summaries on has
folded all but the newest 20 into summaries (each earlier summary folded into the next, the newest active),
as `rooms/summaries.py: fold_oldest` leaves them. Then M turns run as the auto loop runs them, the model's answer
aside: the room loaded and measured (`load_room`, the context check), the agent's request built (`history`),
the answer saved, pushed (`RoomBroadcaster`) and the queue moved on. The figure is CPU per turn.

Target: the turn at 3 x 1,000 within 1.3x of the turn at 3 x 20.

    uv run python bench/room_memory.py [--turns 50] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import ROOM_TEXT, django_with_temp_db, print_table, room_with_history

UNFOLDED = 20  # what a summarising room keeps unfolded: the same at both sizes


def seed_room(history: int) -> Any:
    from rooms.models import RoomMessage

    room, _, said = room_with_history(history)
    folded = said[: max(0, history - UNFOLDED)]
    summary = None
    for start in range(0, len(folded), UNFOLDED):  # one summary per fold; each folds the one before it
        batch = folded[start : start + UNFOLDED]
        newer = RoomMessage.objects.create(
            room=room,
            kind="summary",
            author="Summary",
            content=f"They made points {start} to {start + len(batch) - 1}.",
            data={"first": folded[0].pk, "folded": len(batch) + (summary is not None)},
        )
        ids = [m.pk for m in batch] + ([summary.pk] if summary else [])
        RoomMessage.objects.filter(pk__in=ids).update(folded_into=newer)
        summary = newer
    return room


def turn_cost(history: int, turns: int) -> float:
    """CPU seconds per auto turn, the model's answer aside."""
    from asgiref.sync import sync_to_async

    from rooms.broadcast import RoomBroadcaster
    from rooms.context import history as request_of
    from rooms.models import RoomMessage
    from rooms.saving import advance_queue, save
    from rooms.table import load_room

    room = seed_room(history)
    broadcaster = RoomBroadcaster(room.pk)

    def one_turn(i: int) -> tuple[Any, Any]:
        table = load_room(room.pk)
        broadcaster.loaded(table)
        table.meter().state()
        agent = table.agents[i % 3]
        request_of(table.messages, agent)
        message = save(table.room, RoomMessage.Kind.AGENT, ROOM_TEXT.format(i=i), agent)
        advance_queue(table.room, (agent.pk,), (), (), False, ())
        return table, message

    async def run() -> float:
        started = time.process_time()
        for i in range(turns):
            table, message = await sync_to_async(one_turn)(i)
            await broadcaster.message_saved(table.room, message)
        await broadcaster.drain()
        return time.process_time() - started

    return asyncio.run(run()) / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=50, help="turns run at each size")
    parser.add_argument("--smoke", action="store_true", help="a tiny run that only checks the bench works")
    args = parser.parse_args()
    turns, sizes = (5, (20, 60)) if args.smoke else (args.turns, (20, 1000))
    django_with_temp_db("http://127.0.0.1:9/v1")
    turn_cost(sizes[0], 5)  # warm up: templates compiled, imports done
    # Twice each, alternating, the lower kept: what is left over from one size's run does not weigh on the other.
    runs = [(size, turn_cost(size, turns)) for _ in range(2) for size in sizes]
    short, long = (min(cost for size, cost in runs if size == wanted) for wanted in sizes)
    rows = [
        (f"auto turn, summaries on, 3 agents x {sizes[0]} messages", f"{short * 1000:.2f} ms", "CPU"),
        (f"auto turn, summaries on, 3 agents x {sizes[1]} messages", f"{long * 1000:.2f} ms", "CPU"),
        (f"ratio {sizes[1]} / {sizes[0]}", f"{long / short:.2f}x", "target <= 1.3x"),
    ]
    print_table(rows)


if __name__ == "__main__":
    main()
