"""A crowd: N spectators on one public debate over two web processes, against the floor, in one run.

Starts the whole stack on loopback: the test server (tokens stamped with their send time), a Redis of its
own (redis-server), a fresh database on the PostgreSQL of CHAOSLM_TEST_DATABASE_URL (a role that may create
databases; `eval "$(bin/start-services)"`), two daphne web processes, then N websocket spectators (bench/_spectator.py:
the page's live part, offsets and resync included) split over the two, then a Celery worker that runs a
judged duel. Then the floor: the same number of token pushes at the same rate, by a bare Channels consumer
group (bench/_floor.py) over two daphne processes and the same Redis, to the same number of sockets.

Prints what every spectator got against what the debate saved (events and tokens, lost, duplicated, out of
order), p50/p99 token latency (from the LLM server's send to the spectator's socket; the floor's from its
push), CPU per delivered websocket message (web processes, worker or pusher, and Redis), and resident memory
per spectator on the web processes, idle (connected, nothing pushed) and watching. Goals at 1,000: p99 and
CPU per message within 1.5x the floor's.

    uv run python bench/crowd.py [--spectators 1000] [--turns 2] [--layer pubsub|core] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import httpx2 as httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import PRODUCTION_LIKE, ROOT, free_port, parse_args, print_table, start_test_server
from bench._spectator import STAMP, Spectator

DATABASE_URL = os.environ.get("CHAOSLM_TEST_DATABASE_URL", "")
TICKS = os.sysconf("SC_CLK_TCK")
WORKER = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "--without-gossip"]
WORKER += ["--without-mingle", "--loglevel", "WARNING", "-n", "crowd@%h"]


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def wait_for_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing answers on port {port}")


class Stack:
    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        with (self.logs / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                command, cwd=ROOT, env=env or self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.processes.append(process)
        return process

    def daphne(self, name: str, application: str, env: dict[str, str] | None = None) -> tuple[int, int]:
        port = free_port()
        process = self.start(
            name, [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), application], env
        )
        wait_for_port(port)
        return process.pid, port

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, check=False
        )
        if result.returncode:
            raise RuntimeError(result.stderr[-2000:])
        return result.stdout

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)

    def stop_all(self) -> None:
        for process in reversed(self.processes):
            self.stop(process)


def fresh_database() -> tuple[str, str]:
    name = f"chaoslm_bench_{secrets.token_hex(4)}"
    with psycopg.connect(DATABASE_URL, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(DATABASE_URL)._replace(path=f"/{name}")), name


def drop_database(name: str) -> None:
    with psycopg.connect(DATABASE_URL, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def crowd_stack(
    name: str, llm: subprocess.Popen[bytes], llm_url: str, settings: dict[str, str]
) -> Iterator[tuple[Stack, subprocess.Popen[bytes]]]:
    """The stack every crowd bench starts beside its test server (`llm`, serving at `llm_url`): a Redis of its own,
    a fresh database migrated with the sample personas, and the environment its processes share (a deployment's,
    on the Celery runner), the bench's own `settings` on top. Yields the stack (its logs in a new folder named for
    the bench) and the Redis process; on the way out every process stops, the test server too, and the database
    is dropped."""
    logs = Path(os.environ.get("TMPDIR", "/tmp")) / f"chaoslm-{name}-{secrets.token_hex(3)}"
    logs.mkdir(parents=True)
    redis_port = free_port()
    database_url, database = fresh_database()
    env = {
        **os.environ,
        **PRODUCTION_LIKE,
        "DATABASE_URL": database_url,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "CHAOSLM_RUNNER": "celery",
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "bench",
        "CHAOSLM_DEFAULT_MODEL": "bench-model",
        "CHAOSLM_TRANSCRIPTS_DIR": str(logs / "transcripts"),
        "CHAOSLM_LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **settings,
    }
    stack = Stack(env, logs)
    try:
        redis = stack.start("redis", ["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"])
        time.sleep(0.5)
        stack.manage("migrate", "--noinput")
        stack.manage("import_personas", "personas/samples/")
        yield stack, redis
    finally:
        stack.stop_all()
        llm.terminate()
        llm.wait(10)
        drop_database(database)


def debate_status(database_url: str, debate_id: int) -> str:
    with psycopg.connect(database_url) as connection:
        row = connection.execute("SELECT status FROM debates_debate WHERE id = %s", [debate_id]).fetchone()
    return row[0] if row else ""


def saved_ordinals(database_url: str, debate_id: int) -> set[int]:
    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT ordinal FROM debates_event WHERE debate_id = %s AND kind != 'INTERNAL'", [debate_id]
        ).fetchall()
    return {row[0] for row in rows}


async def until(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


def chaoslm_run(stack: Stack, args: argparse.Namespace, redis_pid: int) -> dict[str, Any]:
    web = [stack.daphne(f"web-{i}", "config.asgi:application") for i in range(2)]
    web_pids = [pid for pid, _ in web]
    for _, port in web:  # each process's first request starts its background imports: let them finish
        httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
    time.sleep(8 if not args.smoke else 2)
    command = ["debate", "duel", "--topic", "Should cities ban private cars?", "--premise", "Cities should"]
    command += ["--turns", str(args.turns), "--a", "Ada Sterling", "--b", "Marcus Vale"]
    command += ["--judge", "Judge Ines Okafor", "--enqueue", "--visibility", "public"]
    debate_id = int(stack.manage(*command).strip().splitlines()[-1])  # queued: no worker runs yet
    urls = [f"ws://127.0.0.1:{port}/ws/debates/{debate_id}/" for _, port in web]
    spectators = [Spectator([urls[i % 2]]) for i in range(args.spectators)]
    rss_before = rss_bytes(web_pids)

    async def watch() -> dict[str, float]:
        done = asyncio.Event()
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            # They arrive a hundred at a time: what is measured is delivery, not a thousand handshakes at once.
            tasks = []
            for start in range(0, len(spectators), 100):
                batch = spectators[start : start + 100]
                tasks += [asyncio.ensure_future(s.watch_until(session, done)) for s in batch]
                await until(lambda batch=batch: all(s.messages for s in batch), 120, "the spectators' catch-ups")
            await asyncio.sleep(2)
            rss_idle = rss_bytes(web_pids)
            web_cpu, redis_cpu, client_cpu = cpu_seconds(web_pids), cpu_seconds([redis_pid]), time.process_time()
            worker = stack.start("worker", WORKER)
            # The worker's start-up (Celery, Django, the LLM client: seconds of CPU) is not delivery: its CPU
            # counts from when it has taken the debate.
            while (status := debate_status(stack.env["DATABASE_URL"], debate_id)) == "pending":
                await asyncio.sleep(0.05)
            worker_cpu = cpu_seconds([worker.pid])
            rss_peak = rss_idle
            while status not in ("completed", "error"):
                rss_peak = max(rss_peak, rss_bytes(web_pids))
                await asyncio.sleep(0.5)
                status = debate_status(stack.env["DATABASE_URL"], debate_id)
            # Saved is not delivered: under load the last pushes reach the sockets seconds later. Wait for every
            # card (what does not come in two minutes counts as lost).
            saved = await asyncio.to_thread(saved_ordinals, stack.env["DATABASE_URL"], debate_id)
            with contextlib.suppress(RuntimeError):
                await until(lambda: all(saved <= set(s.saved) for s in spectators), 120, "every card")
            done.set()
            await asyncio.gather(*tasks)
            parts = {
                "web": cpu_seconds(web_pids) - web_cpu,
                "worker": cpu_seconds([worker.pid]) - worker_cpu,
                "redis": cpu_seconds([redis_pid]) - redis_cpu,
            }
            client = time.process_time() - client_cpu
            stack.stop(worker)
            return {
                "rss_idle": rss_idle,
                "rss_peak": rss_peak,
                "cpu": sum(parts.values()),
                "parts": parts,
                "client": client,
            }

    measured = asyncio.run(watch())
    transcript = httpx.get(f"http://127.0.0.1:{web[1][1]}/debates/{debate_id}/export.json", timeout=30).json()
    events = [e for e in transcript["events"] if e["kind"] != "INTERNAL"]
    assert transcript["status"] == "completed", transcript["status"]
    streamed = [e for e in events if e["visibility"] != "private" and STAMP.search(e["content"] or "")]
    expected_tokens = sum(len(STAMP.findall(e["content"])) for e in streamed)
    expected_events = len(events)
    ordinals = {e["ordinal"] for e in events}
    received_events = sum(len(s.saved) for s in spectators)
    lost_events = sum(len(ordinals - set(s.saved)) for s in spectators)
    received_tokens = sum(len(s.latencies) for s in spectators)
    lost_tokens = 0
    for s in spectators:
        for event in streamed:
            got = len(STAMP.findall(s.streamed.get(event["ordinal"], "")))
            lost_tokens += max(0, len(STAMP.findall(event["content"])) - got)
    latencies = sorted(latency for s in spectators for latency in s.latencies)
    messages = sum(s.messages for s in spectators)
    chars = sum(s.chars for s in spectators)
    for process in list(stack.processes):
        if process.pid in web_pids:
            stack.stop(process)
    return {
        "expected_events": expected_events * len(spectators),
        "received_events": received_events,
        "lost_events": lost_events,
        "expected_tokens": expected_tokens * len(spectators),
        "received_tokens": received_tokens,
        "lost_tokens": lost_tokens,
        "duplicated": sum(s.cards_again + (s.text_again > 0) for s in spectators),
        "out_of_order": sum(s.late + s.gaps for s in spectators),
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p99": latencies[int(len(latencies) * 0.99)] if latencies else float("nan"),
        "messages": messages,
        "chars": chars,
        "client": measured["client"],
        "cpu": measured["cpu"],
        "parts": measured["parts"],
        "idle_per_spectator": (measured["rss_idle"] - rss_before) / len(spectators),
        "watching_per_spectator": (measured["rss_peak"] - rss_before) / len(spectators),
        "tokens": expected_tokens,
    }


def floor_run(stack: Stack, spectators: int, tokens: int, rate: float, redis_pid: int) -> dict[str, Any]:
    web = [stack.daphne(f"floor-{i}", "bench._floor:application") for i in range(2)]
    pids = [pid for pid, _ in web]
    received: list[list[float]] = [[] for _ in range(spectators)]
    counts = [0] * spectators
    chars = [0] * spectators

    async def spectator(session: aiohttp.ClientSession, index: int, ready: asyncio.Event) -> None:
        port = web[index % 2][1]
        async with session.ws_connect(f"ws://127.0.0.1:{port}/floor/") as ws:
            ready.set()
            async for message in ws:
                now = time.time()
                counts[index] += 1
                chars[index] += len(message.data)
                if "status-completed" in message.data:
                    return
                received[index].extend(now - int(stamp) / 1e6 for stamp in STAMP.findall(message.data))

    async def run() -> dict[str, float]:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            readies = [asyncio.Event() for _ in range(spectators)]
            tasks = []
            for start in range(0, spectators, 100):  # a hundred at a time, as ChaosLM's spectators arrive
                batch = range(start, min(start + 100, spectators))
                tasks += [asyncio.ensure_future(spectator(session, i, readies[i])) for i in batch]
                for i in batch:
                    await asyncio.wait_for(readies[i].wait(), 120)
            await asyncio.sleep(2)
            # The pusher is one of the two web processes: their CPU counts together.
            before = {"web": cpu_seconds(pids), "redis": cpu_seconds([redis_pid]), "client": time.process_time()}
            async with httpx.AsyncClient(timeout=600) as client:
                query = f"tokens={tokens}&rate={rate}&spectators=0"
                await client.get(f"http://127.0.0.1:{web[0][1]}/replay?{query}")
            await asyncio.wait_for(asyncio.gather(*tasks), 120)
            after = {"web": cpu_seconds(pids), "redis": cpu_seconds([redis_pid]), "client": time.process_time()}
            return {part: after[part] - before[part] for part in before}

    parts = asyncio.run(run())
    client = parts.pop("client")
    latencies = sorted(latency for spectator in received for latency in spectator)
    return {
        "expected_tokens": tokens * spectators,
        "received_tokens": len(latencies),
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p99": latencies[int(len(latencies) * 0.99)] if latencies else float("nan"),
        "messages": sum(counts),
        "chars": sum(chars),
        "client": client,
        "cpu": sum(parts.values()),
        "parts": parts,
    }


def per_message(run: dict[str, Any], part: str) -> str:
    return f"{run['parts'][part] / max(run['messages'], 1) * 1e6:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spectators", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--layer", choices=["core", "pubsub"], default="pubsub", help="CHAOSLM_CHANNEL_LAYER")
    parser.add_argument("--token-rate", type=float, default=20.0, help="the LLM's tokens a second")
    args = parse_args(parser, {"spectators": 20, "turns": 1})
    if not DATABASE_URL or not shutil.which("redis-server"):
        print_table([("crowd", "left out", "needs CHAOSLM_TEST_DATABASE_URL and redis-server")])
        return
    llm, llm_url = start_test_server(0.05, args.token_rate, 30, "--stamp-tokens")
    # A PostgreSQL connection kept per process: opened per socket (the default), a crowd's handshakes queue
    # behind each other on the one thread Channels runs database calls in.
    settings = {"CHAOSLM_CHANNEL_LAYER": args.layer, "CHAOSLM_DB_CONN_MAX_AGE": "600"}
    with crowd_stack("crowd", llm, llm_url, settings) as (stack, redis):
        ours = chaoslm_run(stack, args, redis.pid)
        floor = floor_run(stack, args.spectators, ours["tokens"], args.token_rate, redis.pid)

    cpu_ours = ours["cpu"] / max(ours["messages"], 1)
    cpu_floor = floor["cpu"] / max(floor["messages"], 1)
    print(f"{args.spectators} spectators over 2 web processes, layer {args.layer}, logs in {stack.logs}")
    print_table(
        [
            ("spectators", str(args.spectators), ""),
            ("events delivered", f"{ours['received_events']}/{ours['expected_events']}", "received/expected"),
            ("tokens delivered", f"{ours['received_tokens']}/{ours['expected_tokens']}", "received/expected"),
            ("lost (events, tokens)", f"{ours['lost_events']}, {ours['lost_tokens']}", "goal 0"),
            ("duplicated", str(ours["duplicated"]), "pushes of a card shown already; text twice"),
            ("out of order", str(ours["out_of_order"]), "goal 0"),
            ("token p50 ms", f"{ours['p50'] * 1000:.1f}", f"floor {floor['p50'] * 1000:.1f}"),
            ("token p99 ms", f"{ours['p99'] * 1000:.1f}", f"floor {floor['p99'] * 1000:.1f}"),
            ("p99 / floor", f"{ours['p99'] / floor['p99']:.2f}x", "goal <= 1.5x"),
            ("messages delivered", str(ours["messages"]), f"floor {floor['messages']}"),
            ("CPU µs / message", f"{cpu_ours * 1e6:.0f}", f"floor {cpu_floor * 1e6:.0f}"),
            ("CPU / message / floor", f"{cpu_ours / cpu_floor:.2f}x", "goal <= 1.5x"),
            (
                "CPU µs / token delivered",
                f"{ours['cpu'] / max(ours['received_tokens'], 1) * 1e6:.0f}",
                f"floor {floor['cpu'] / max(floor['received_tokens'], 1) * 1e6:.0f}; the same work, however batched",
            ),
            ("CPU µs / message: web", per_message(ours, "web"), f"floor {per_message(floor, 'web')}"),
            ("CPU µs / message: worker", per_message(ours, "worker"), "the debate: LLM client, database, rendering"),
            ("CPU µs / message: Redis", per_message(ours, "redis"), f"floor {per_message(floor, 'redis')}"),
            (
                "CPU µs / message: spectators",
                f"{ours['client'] / max(ours['messages'], 1) * 1e6:.0f}",
                f"floor {floor['client'] / max(floor['messages'], 1) * 1e6:.0f}; this process, not counted above",
            ),
            (
                "characters / message",
                f"{ours['chars'] / max(ours['messages'], 1):.0f}",
                f"floor {floor['chars'] / max(floor['messages'], 1):.0f}",
            ),
            ("floor tokens delivered", f"{floor['received_tokens']}/{floor['expected_tokens']}", ""),
            ("KiB / idle spectator", f"{ours['idle_per_spectator'] / 1024:.0f}", "web processes' RSS"),
            ("KiB / watching spectator", f"{ours['watching_per_spectator'] / 1024:.0f}", "peak while it runs"),
        ]
    )


if __name__ == "__main__":
    main()
