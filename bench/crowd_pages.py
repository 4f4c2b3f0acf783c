"""Rooms and tournament pages watched by a crowd over two web processes (bench/crowd.py's stack).

1. A room in auto mode, watched by N people through its share link: each watcher (bench/_spectator.RoomWatcher,
   the page's live part in Python, reconnects and offsets included) ends with every message of a fresh load
   once, in order, and each answer's streamed text equal to its saved text. Token latency from the LLM server
   to the watcher, p50 and p99.
2. A tournament page followed by N people through its share link: every watcher gets the same progress pushes,
   each once and in order (the done count never goes back), and ends at the tournament's end.

Both start the whole stack on loopback (the test server, a Redis of their own, a fresh PostgreSQL database,
two daphne processes, a Celery worker), and print web-process resident memory per watcher, idle and watching.

    uv run python bench/crowd_pages.py [--watchers 200] [--page room|tournament|both] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import re
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import httpx2 as httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import parse_args, print_table, start_test_server
from bench._spectator import STAMP, RoomWatcher
from bench.crowd import DATABASE_URL, WORKER, Stack, crowd_stack, rss_bytes

ROOM = """
from django.contrib.auth.models import User
from personas.models import Persona
from rooms import services
owner = User.objects.create_user("host")
personas = Persona.objects.filter(name__in=["Ada Sterling", "Marcus Vale"])
room = services.create_room(owner, "A crowded room", "unlisted", personas)
room.max_messages = {messages}
room.save()
print(room.pk, room.share_token)
"""
# What the owner's auto-mode button does (rooms/views.room_mode).
START_AUTO = """
from rooms import broadcast, services, work
from rooms.models import Room
room = Room.objects.get(pk={room_id})
note = services.set_mode(room, "auto")
work.start_auto(room.pk)
broadcast.push_messages(room, note)
broadcast.push_status(room)
"""
TOURNAMENT = (
    "name: A crowded league\noptions: {{turns: 2}}\ndebaters: [Ada Sterling, Marcus Vale]\n"
    "judges: [Judge Ines Okafor]\nconcurrency: 2\nquestions: [{questions}]\n"
)
MESSAGE = re.compile(r'<article id="msg-(\d+)" class="msg msg-([a-z]+)')
DONE = re.compile(r'<span class="t-done">(\d+)</span>')
STATUS = re.compile(r"tournament-progress status-([a-z]+)")


def query(database_url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url) as connection:
        return connection.execute(sql, params).fetchall()


async def arrive(watchers: list[Any], start: Any, connected: Any) -> list[asyncio.Future[None]]:
    """Start `watchers` a hundred at a time, each batch connected (its catch-up in) before the next."""
    tasks = []
    for first in range(0, len(watchers), 100):
        batch = watchers[first : first + 100]
        tasks += [asyncio.ensure_future(start(w)) for w in batch]
        deadline = time.monotonic() + 120
        while not all(connected(w) for w in batch):
            if time.monotonic() > deadline:
                raise RuntimeError("the watchers did not connect")
            await asyncio.sleep(0.1)
    return tasks


def room_run(stack: Stack, web: list[tuple[int, int]], watchers_n: int, messages: int) -> list[tuple[str, str, str]]:
    database_url = stack.env["DATABASE_URL"]
    room_id, token = stack.manage("shell", "-c", ROOM.format(messages=messages)).split()[-2:]
    urls = [f"ws://127.0.0.1:{port}/ws/room-share/{token}/" for _, port in web]
    watchers = [RoomWatcher([urls[i % 2], urls[1 - i % 2]]) for i in range(watchers_n)]
    web_pids = [pid for pid, _ in web]
    rss_before = rss_bytes(web_pids)

    async def watch() -> tuple[int, int]:
        done = asyncio.Event()
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            tasks = await arrive(watchers, lambda w: w.watch(session, done), lambda w: w.messages_received > 0)
            await asyncio.sleep(2)
            rss_idle = rss_peak = rss_bytes(web_pids)
            await asyncio.to_thread(stack.manage, "shell", "-c", START_AUTO.format(room_id=room_id))
            paused = (
                "SELECT count(*) FROM rooms_roommessage WHERE room_id = %s AND content LIKE 'Conversation paused%%'"
            )
            deadline = time.monotonic() + 600
            while not query(database_url, paused, int(room_id))[0][0] and time.monotonic() < deadline:
                rss_peak = max(rss_peak, rss_bytes(web_pids))
                await asyncio.sleep(0.5)
            saved = {
                pk for (pk,) in query(database_url, "SELECT id FROM rooms_roommessage WHERE room_id = %s", int(room_id))
            }
            # Saved is not delivered: wait for every message on every page (what does not come counts as lost).
            deadline = time.monotonic() + 120
            while not all(saved <= set(w.messages) and not w.writing for w in watchers):
                if time.monotonic() > deadline:
                    late = [w for w in watchers if not saved <= set(w.messages) or w.writing][:3]
                    print("not delivered in 2 minutes:", [(sorted(saved - set(w.messages)), w.writing) for w in late])
                    break
                await asyncio.sleep(0.2)
            done.set()
            for w in watchers:
                if w.socket is not None:
                    await w.socket.close()
            await asyncio.gather(*tasks)
            return rss_idle, rss_peak

    rss_idle, rss_peak = asyncio.run(watch())
    page = httpx.get(f"http://127.0.0.1:{web[0][1]}/r/{token}/", timeout=30).text
    fresh = {int(pk): kind for pk, kind in MESSAGE.findall(page)}
    answers = [
        content
        for (content,) in query(
            database_url,
            "SELECT content FROM rooms_roommessage WHERE room_id = %s AND kind = 'agent' ORDER BY id",
            int(room_id),
        )
    ]
    lost_messages = sum(len(set(fresh) - set(w.messages)) for w in watchers)
    wrong_text = sum(
        [t.split() for t in w.streamed] != [a.split() for a in answers][: len(w.streamed)]
        or len(w.streamed) < len(answers)
        for w in watchers
    )
    tokens = sum(len(STAMP.findall(a)) for a in answers)
    latencies = sorted(latency for w in watchers for latency in w.latencies)
    return [
        ("room: watchers (share link)", str(watchers_n), "over 2 web processes"),
        (
            "room: messages delivered",
            f"{sum(len(w.messages) for w in watchers)}/{len(fresh) * watchers_n}",
            "received/expected",
        ),
        ("room: tokens delivered", f"{len(latencies)}/{tokens * watchers_n}", "received/expected"),
        ("room: lost messages", str(lost_messages), "goal 0"),
        ("room: answers streamed wrong", str(wrong_text), "watchers whose streamed text is not the saved text; goal 0"),
        ("room: out of order", str(sum(w.late + w.gaps for w in watchers)), "goal 0"),
        ("room: cards twice", str(sum(w.cards_again for w in watchers)), "harmless (upsert), counted"),
        ("room: page as a fresh load", str(sum(w.messages == fresh for w in watchers)), f"of {watchers_n}"),
        ("room: reconnects", str(sum(w.connects - 1 for w in watchers)), ""),
        ("room: token p50 ms", f"{_ms(latencies, 0.5)}", "LLM server to watcher"),
        ("room: token p99 ms", f"{_ms(latencies, 0.99)}", ""),
        ("room: KiB / idle watcher", f"{(rss_idle - rss_before) / watchers_n / 1024:.0f}", "web processes' RSS"),
        ("room: KiB / watching watcher", f"{(rss_peak - rss_before) / watchers_n / 1024:.0f}", "peak while it runs"),
    ]


def _ms(latencies: list[float], quantile: float) -> str:
    if not latencies:
        return "n/a"
    if quantile == 0.5:
        return f"{statistics.median(latencies) * 1000:.0f}"
    return f"{latencies[int(len(latencies) * quantile)] * 1000:.0f}"


def tournament_run(
    stack: Stack, web: list[tuple[int, int]], watchers_n: int, questions: int, logs: Path
) -> list[tuple[str, str, str]]:
    database_url = stack.env["DATABASE_URL"]
    spec = logs / "league.yaml"
    spec.write_text(TOURNAMENT.format(questions=", ".join(f"Question {i} holds" for i in range(questions))))
    tournament_id = int(stack.manage("tournament", "run", str(spec), "--enqueue").strip().splitlines()[-1])
    # Shared by link, as the owner's sharing panel does: a tournament starts private.
    with psycopg.connect(database_url) as connection:
        connection.execute("UPDATE tournaments_tournament SET visibility = 'unlisted' WHERE id = %s", [tournament_id])
    token = query(database_url, "SELECT share_token FROM tournaments_tournament WHERE id = %s", tournament_id)[0][0]
    urls = [f"ws://127.0.0.1:{port}/ws/tournament-share/{token}/" for _, port in web]
    pushes: list[list[str]] = [[] for _ in range(watchers_n)]  # each watcher's pushes (after its catch-up), hashed
    dones: list[list[int]] = [[] for _ in range(watchers_n)]
    connected = [False] * watchers_n
    web_pids = [pid for pid, _ in web]
    rss_before = rss_bytes(web_pids)

    async def follow(session: aiohttp.ClientSession, index: int) -> None:
        origin = f"http://127.0.0.1:{urls[index % 2].split(':')[2].split('/')[0]}"
        async with session.ws_connect(urls[index % 2], headers={"Origin": origin}) as ws:
            first = True
            async for message in ws:
                connected[index] = True
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                if not first:
                    pushes[index].append(hashlib.sha1(message.data.encode()).hexdigest())
                dones[index] += [int(d) for d in DONE.findall(message.data)]
                first = False
                if any(status in STATUS.findall(message.data) for status in ("completed", "failed")):
                    return

    async def watch() -> tuple[int, int]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            tasks = await arrive(list(range(watchers_n)), lambda i: follow(session, i), lambda i: connected[i])
            await asyncio.sleep(2)
            rss_idle = rss_peak = rss_bytes(web_pids)
            worker = stack.start("worker", WORKER)
            gathered = asyncio.ensure_future(asyncio.wait_for(asyncio.gather(*tasks), 900))
            while not gathered.done():
                rss_peak = max(rss_peak, rss_bytes(web_pids))
                await asyncio.sleep(0.5)
            await gathered
            stack.stop(worker)
            return rss_idle, rss_peak

    rss_idle, rss_peak = asyncio.run(watch())
    reference = max(pushes, key=pushes.count)  # what most watchers got: every one should have the same
    same = sum(p == reference for p in pushes)
    lost = sum(len(set(reference) - set(p)) for p in pushes)
    twice = sum(len(p) - len(set(p)) - (len(reference) - len(set(reference))) for p in pushes)
    backwards = sum(any(b < a for a, b in itertools.pairwise(d)) for d in dones)
    total = questions * 2
    return [
        ("tournament: watchers (share link)", str(watchers_n), f"{total} duels, 2 at a time"),
        ("tournament: progress pushes a watcher", str(len(reference)), "after its catch-up"),
        ("tournament: watchers with the same pushes", f"{same}/{watchers_n}", "each once, in order; goal all"),
        ("tournament: pushes lost", str(lost), "goal 0"),
        ("tournament: pushes twice", str(max(twice, 0)), "goal 0"),
        ("tournament: done count going back", str(backwards), "watchers; goal 0"),
        ("tournament: ended at the end", str(sum(bool(d) and d[-1] == total for d in dones)), f"of {watchers_n}"),
        ("tournament: KiB / idle watcher", f"{(rss_idle - rss_before) / watchers_n / 1024:.0f}", "web processes' RSS"),
        (
            "tournament: KiB / watching watcher",
            f"{(rss_peak - rss_before) / watchers_n / 1024:.0f}",
            "peak while it runs",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--page", choices=["room", "tournament", "both"], default="both")
    parser.add_argument("--messages", type=int, default=6, help="the room's auto-mode message limit")
    parser.add_argument("--questions", type=int, default=3, help="the tournament's questions (2 duels each)")
    parser.add_argument("--layer", choices=["core", "pubsub"], default="pubsub", help="CHAOSLM_CHANNEL_LAYER")
    args = parse_args(parser, {"watchers": 10, "messages": 2, "questions": 1})
    if not DATABASE_URL or not shutil.which("redis-server"):
        print_table([("crowd pages", "left out", "needs CHAOSLM_TEST_DATABASE_URL and redis-server")])
        return
    llm, llm_url = start_test_server(0.05, 20.0, 30, "--stamp-tokens")
    settings = {"CHAOSLM_CHANNEL_LAYER": args.layer, "CHAOSLM_DB_CONN_MAX_AGE": "600"}
    rows: list[tuple[str, str, str]] = []
    with crowd_stack("crowd-pages", llm, llm_url, settings) as (stack, _):
        web = [stack.daphne(f"web-{i}", "config.asgi:application") for i in range(2)]
        for _, port in web:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
        if args.page in ("room", "both"):
            worker = stack.start("worker", WORKER)
            rows += room_run(stack, web, args.watchers, args.messages)
            stack.stop(worker)
            print(f"{args.watchers} watchers over 2 web processes, layer {args.layer}, logs in {stack.logs}")
            print_table(rows)  # now: the tournament's part takes minutes more
            rows = []
        if args.page in ("tournament", "both"):
            rows += tournament_run(stack, web, args.watchers, args.questions, stack.logs)
    if rows:
        print(f"{args.watchers} watchers over 2 web processes, layer {args.layer}, logs in {stack.logs}")
        print_table(rows)


if __name__ == "__main__":
    main()
