"""The embedded channel layer's cost per push, against Channels' in-memory layer in the same run.

N consumers in one group each wait on their channel, as a page's sockets do; one push is a group_send
that every consumer receives. Prints CPU milliseconds per push at each group size for both layers,
and their ratio. The embedded default should stay near-linear in N where Channels' grows as N squared.

    uv run python bench/channel_layer.py [--sizes 10,100,500] [--pushes 300] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from channels.layers import InMemoryChannelLayer

from bench._setup import parse_args, print_table
from chaoslm.embedded_layer import EmbeddedChannelLayer

HTML = '<div hx-swap-oob="tokens:#transcript"><span data-into="ev-7-text">a token </span></div>'


async def cpu_per_push(layer: InMemoryChannelLayer, members: int, pushes: int) -> float:
    """CPU milliseconds per push, from the group_send until every member has received it."""

    async def member(name: str) -> None:
        while not (await layer.receive(name)).get("last"):
            pass

    names = [f"specific.member!{n}" for n in range(members)]
    for name in names:
        await layer.group_add("debate-1", name)
    tasks = [asyncio.create_task(member(name)) for name in names]
    await asyncio.sleep(0)
    started = time.process_time()
    for _ in range(pushes):
        await layer.group_send("debate-1", {"type": "push.html", "html": HTML})
        await asyncio.sleep(0)  # let the members take it, as the server's loop would between pushes
    await layer.group_send("debate-1", {"type": "push.html", "html": "", "last": True})
    await asyncio.gather(*tasks)
    return (time.process_time() - started) / (pushes + 1) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,500", help="group sizes, comma-separated")
    parser.add_argument("--pushes", type=int, default=300)
    args = parse_args(parser, {"sizes": "3,10", "pushes": 5})
    rows = []
    for size in (int(n) for n in args.sizes.split(",")):
        stock = asyncio.run(cpu_per_push(InMemoryChannelLayer(capacity=1500), size, args.pushes))
        embedded = asyncio.run(cpu_per_push(EmbeddedChannelLayer(capacity=1500), size, args.pushes))
        rows.append((f"{size} members: Channels' in-memory layer", f"{stock:.3f} ms", "CPU per push"))
        rows.append((f"{size} members: embedded layer", f"{embedded:.3f} ms", f"{embedded / stock:.2f}x Channels'"))
    print_table(rows)


if __name__ == "__main__":
    main()
