"""Room push cost: the CPU a room's live page costs per message, at a short and a long conversation.

A room of 3 agents holds N messages; then M more arrive as the auto loop saves them. For each, the
broadcaster is handed the engine's table (as on every turn) and told of the message: it renders the
card and the status line and queues them for the page. The figure is CPU per message. Beside it, the
same status line loaded from the database (what an owner's action pushes), the cost a push had when
the broadcaster reloaded the room every time.

Target: the push at 3 x 500 within 1.5x of the push at 3 x 20.

    uv run python bench/room_push.py [--messages 50] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import ROOM_TEXT, django_with_temp_db, print_table, room_with_history


def push_cost(history: int, arriving: int) -> tuple[float, float]:
    """CPU seconds per message: the broadcaster's push, and a status line reloaded from the database."""
    from rooms.broadcast import RoomBroadcaster, status_now_html
    from rooms.models import RoomMessage
    from rooms.table import load_room

    room, agents, _ = room_with_history(history)
    table = load_room(room.pk)
    table.meter()
    new = [
        RoomMessage.objects.create(
            room=room, kind="agent", agent=agents[i % 3], author=agents[i % 3].name, content=ROOM_TEXT.format(i=i)
        )
        for i in range(arriving)
    ]
    broadcaster = RoomBroadcaster(room.pk)
    broadcaster.loaded(table)

    async def pushes() -> float:
        started = time.process_time()
        for message in new:
            # The engine's turn: the room as loaded and measured (its cost, not the push's), handed over.
            broadcaster.loaded(table)
            await broadcaster.message_saved(table.room, message)
        await broadcaster.drain()
        return time.process_time() - started

    pushed = asyncio.run(pushes()) / arriving
    started = time.process_time()
    for _ in range(arriving):
        status_now_html(room)
    reloaded = (time.process_time() - started) / arriving
    return pushed, reloaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=50, help="messages arriving at each size")
    parser.add_argument("--smoke", action="store_true", help="a tiny run that only checks the bench works")
    args = parser.parse_args()
    arriving, sizes = (5, (20, 60)) if args.smoke else (args.messages, (20, 500))
    django_with_temp_db("http://127.0.0.1:9/v1")
    push_cost(sizes[0], 5)  # warm up: templates compiled, imports done
    short, long = push_cost(sizes[0], arriving), push_cost(sizes[1], arriving)
    rows = [
        (f"push per message, 3 agents x {sizes[0]} messages", f"{short[0] * 1000:.2f} ms", "CPU"),
        (f"push per message, 3 agents x {sizes[1]} messages", f"{long[0] * 1000:.2f} ms", "CPU"),
        (f"ratio {sizes[1]} / {sizes[0]}", f"{long[0] / short[0]:.2f}x", "target <= 1.5x"),
        (f"status reloaded from the database, 3 x {sizes[0]}", f"{short[1] * 1000:.2f} ms", "CPU; an owner's action"),
        (f"status reloaded from the database, 3 x {sizes[1]}", f"{long[1] * 1000:.2f} ms", "CPU; an owner's action"),
    ]
    print_table(rows)


if __name__ == "__main__":
    main()
