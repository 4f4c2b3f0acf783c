"""Many debates at once: N concurrent six-turn duels against the test server at a fixed latency per call.

Nobody watches them, so every reply is asked for whole. Runs them on the inline runner (one process, one
event loop, SQLite) and, when PostgreSQL and Redis are available (CHAOSLM_TEST_DATABASE_URL,
CHAOSLM_TEST_REDIS_URL; `eval "$(bin/start-services)"`), on two Celery workers. Against them, in the same
run and on the same server:

- the floor: the bare openai client with its best transport (aiohttp), asking for whole replies, N tasks
  at once each sending one duel's 30 conversations (bench/_peers.py). ChaosLM's orchestration CPU per call
  is printed as a ratio to the floor's: targets <= 2.0x inline, <= 3.0x on Celery (PostgreSQL and Redis
  round trips included);
- AutoGen AgentChat, when an interpreter that has autogen-agentchat and autogen-ext[openai] is named by
  CHAOSLM_BENCH_AUTOGEN_PYTHON (or this one has them): N `RoundRobinGroupChat` teams of three agents, as
  many calls each. Target: ChaosLM's throughput >= 2x AutoGen's (calls a second, and calls per CPU second).

    uv run python bench/concurrency.py [--duels 100] [--latency 0.2] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import (
    PRODUCTION_LIKE,
    ROOT,
    django_with_temp_db,
    new_duel,
    parse_args,
    print_table,
    start_test_server,
)


def inline_run(count: int) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, LLM calls) for `count` duels at once in this process."""
    from debates.broadcast import DebateBroadcaster
    from debates.engine import RunStats, run_debate
    from debates.models import Debate

    ids = [new_duel().pk for _ in range(count)]
    stats = [RunStats() for _ in ids]

    async def run_all() -> list[Debate]:
        # Broadcast as the web process does (the in-memory channel layer; nobody watching).
        runs = (run_debate(i, DebateBroadcaster(i), stats=s) for i, s in zip(ids, stats, strict=True))
        return await asyncio.gather(*runs)

    cpu, wall = time.process_time(), time.perf_counter()
    debates = asyncio.run(run_all())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert all(d.status == Debate.Status.COMPLETED for d in debates), [d.error_text for d in debates][:3]
    return wall, cpu, sum(s.calls for s in stats)


def proc_cpu_and_peak(pid: int) -> tuple[float, int]:
    """CPU seconds (user+system) and peak RSS in KiB of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    peak = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("VmHWM")
    )
    return cpu, peak


def wait_ready(workers: list[subprocess.Popen[bytes]], logs: Path, timeout: float = 120) -> None:
    """Until each worker has logged "ready." (Celery logs it after the warm-up in config/celery.py)."""
    deadline = time.monotonic() + timeout
    for index, worker in enumerate(workers):
        log = logs / f"bench{index}.log"
        while b" ready." not in log.read_bytes():
            if worker.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"Celery worker bench{index} did not become ready:\n{tail}")
            time.sleep(0.1)


def database_work(connection: Any, name: str) -> tuple[int, int]:
    """(transactions committed, rows written) so far in database `name`, as PostgreSQL counts them."""
    time.sleep(1.5)  # backends report their counts at most once a second
    query = "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted FROM pg_stat_database WHERE datname = %s"
    return connection.execute(query, [name]).fetchone()


def celery_run(count: int, llm_url: str) -> tuple[float, float, int, int, tuple[int, int]] | None:
    """(wall, worker CPU seconds, LLM calls, peak worker RSS KiB, (transactions, rows written) in PostgreSQL)
    for `count` duels on two workers; the database figures include creating the duels."""
    base_db, redis = os.environ.get("CHAOSLM_TEST_DATABASE_URL"), os.environ.get("CHAOSLM_TEST_REDIS_URL")
    if not (base_db and redis):
        return None
    import psycopg

    name = f"chaoslm_bench_{secrets.token_hex(4)}"
    with psycopg.connect(base_db, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    env = {
        **os.environ,
        **PRODUCTION_LIKE,
        "DATABASE_URL": base_db.rsplit("/", 1)[0] + f"/{name}",
        "REDIS_URL": redis,  # flushed below: give the bench a Redis database of its own
        "CHAOSLM_RUNNER": "celery",
        "OPENAI_BASE_URL": llm_url,
        "CHAOSLM_LOG_LEVEL": "WARNING",
        # Start-up is not part of the figure: a worker's background import of the report libraries (seconds
        # of CPU, once ready) would be counted in its first duels' calls. These workers draw no report.
        "CHAOSLM_PRELOAD_REPORT_LIBRARIES": "false",
    }
    workers: list[subprocess.Popen[bytes]] = []
    logs = Path(tempfile.mkdtemp(prefix="chaoslm-bench-workers-"))
    try:

        def manage(*args: str) -> str:
            return subprocess.run(
                [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
            ).stdout

        subprocess.run(["redis-cli", "-u", env["REDIS_URL"], "flushdb"], capture_output=True, check=False)
        per_worker = max(1, count // 2)
        # The workers boot (and warm up) while the database is migrated: they touch it only for a task.
        for index in range(2):
            with open(logs / f"bench{index}.log", "wb") as log:
                workers.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "celery",
                            "-A",
                            "config",
                            "worker",
                            "--pool",
                            "threads",
                            "--concurrency",
                            str(per_worker),
                            "--without-gossip",
                            "--without-mingle",
                            "-n",
                            f"bench{index}@%h",
                            "--loglevel",
                            "INFO",
                        ],
                        cwd=ROOT,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
        setup = "from django.core.management import call_command as c; c('migrate', verbosity=0); "
        manage("shell", "-c", setup + "c('import_personas', 'personas/samples/', verbosity=0)")
        wait_ready(workers, logs)  # worker start-up is not part of the figure
        with psycopg.connect(base_db, autocommit=True) as connection:
            work_before = database_work(connection, name)
        before = sum(proc_cpu_and_peak(w.pid)[0] for w in workers)
        started = time.perf_counter()
        script = (
            "from bench._setup import new_duel; from chaoslm import runner; "
            f"ids = [new_duel().pk for _ in range({count})]; [runner.submit('debate', i) for i in ids]; print(ids)"
        )
        ids = manage("shell", "-c", script).strip().splitlines()[-1]
        query = f"SELECT count(*) FROM debates_debate WHERE status IN ('completed', 'error') AND id IN ({ids[1:-1]})"
        with psycopg.connect(env["DATABASE_URL"]) as connection:
            while connection.execute(query).fetchone()[0] < count:
                time.sleep(0.2)
            wall = time.perf_counter() - started
            failed = connection.execute(query.replace("IN ('completed', 'error')", "= 'error'")).fetchone()[0]
            if failed:
                raise RuntimeError(f"{failed} of {count} duels on the Celery workers ended in an error")
            calls = connection.execute("SELECT count(*) FROM debates_event WHERE kind <> 'HEADER'").fetchone()[0]
        usage = [proc_cpu_and_peak(w.pid) for w in workers]
        with psycopg.connect(base_db, autocommit=True) as connection:
            work = [after - before for after, before in zip(database_work(connection, name), work_before, strict=True)]
        return wall, sum(u[0] for u in usage) - before, calls, max(u[1] for u in usage), (work[0], work[1])
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
        shutil.rmtree(logs, ignore_errors=True)
        with psycopg.connect(base_db, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def recorded_conversations(llm_url: str, calls: int) -> Path:
    """The first `calls` conversations the test server received (one duel's), in a file for bench/_peers.py."""
    with urllib.request.urlopen(llm_url.rsplit("/v1", 1)[0] + "/_control/requests") as response:
        rows = json.load(response)
    path = Path(tempfile.mkstemp(prefix="chaoslm-bench-conversations-", suffix=".json")[1])
    path.write_text(json.dumps([row["body"]["messages"] for row in rows[:calls]]))
    return path


def autogen_python() -> str | None:
    """An interpreter that has AutoGen AgentChat: CHAOSLM_BENCH_AUTOGEN_PYTHON, else this one if it does."""
    named = os.environ.get("CHAOSLM_BENCH_AUTOGEN_PYTHON")
    if named:
        return named
    has_it = importlib.util.find_spec("autogen_agentchat") and importlib.util.find_spec("autogen_ext")
    return sys.executable if has_it else None


def peer_run(python: str, kind: str, llm_url: str, conversations: Path, duels: int) -> dict[str, float]:
    """(wall, cpu, calls) of one of bench/_peers.py's peers, in a process of its own."""
    command = [python, str(ROOT / "bench" / "_peers.py"), kind, llm_url, str(conversations), str(duels)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"bench/_peers.py {kind} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duels", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--reply-words", type=int, default=40, help="words (and so stream chunks) per reply")
    args = parse_args(parser, {"duels": 2, "latency": 0.01, "reply_words": 5})
    server, url = start_test_server(args.latency, reply_words=args.reply_words)
    try:
        django_with_temp_db(url)
        inline_run(1)  # warm up
        conversations = recorded_conversations(url, 30)
        one_wall, _, one_calls = inline_run(1)
        wall, cpu, calls = inline_run(args.duels)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        inline_cpu = cpu / calls
        floor = peer_run(sys.executable, "bare", url, conversations, args.duels)
        floor_cpu = floor["cpu"] / floor["calls"]
        rows = [
            ("duels at once", f"{args.duels}", ""),
            ("latency per call", f"{args.latency * 1000:.0f} ms", ""),
            ("words per reply", f"{args.reply_words}", "whole replies: nobody watches"),
            ("one duel, wall", f"{one_wall:.2f} s", f"{one_calls} calls"),
            ("floor: bare openai client (aiohttp), CPU per call", f"{floor_cpu * 1000:.2f} ms", "whole replies"),
            ("floor: calls a second", f"{floor['calls'] / floor['wall']:.0f}", ""),
            ("inline: all duels, wall", f"{wall:.2f} s", ""),
            ("inline: wall / one duel", f"{wall / one_wall:.2f}x", ""),
            ("inline: LLM calls a second", f"{calls / wall:.0f}", ""),
            ("inline: orchestration CPU per call", f"{inline_cpu * 1000:.2f} ms", ""),
            ("inline: CPU per call / floor", f"{inline_cpu / floor_cpu:.2f}x", "target <= 2.0x"),
            ("inline: peak memory", f"{peak / 1024:.0f} MiB", ""),
        ]
        python = autogen_python()
        if python is None:
            rows.append(("autogen", "not run", "no AutoGen here: set CHAOSLM_BENCH_AUTOGEN_PYTHON"))
        else:
            peer = peer_run(python, "autogen", url, conversations, args.duels)
            peer_cpu, peer_rate = peer["cpu"] / peer["calls"], peer["calls"] / peer["wall"]
            rows += [
                ("autogen (RoundRobinGroupChat): all teams, wall", f"{peer['wall']:.2f} s", f"{peer['calls']} calls"),
                ("autogen: LLM calls a second", f"{peer_rate:.0f}", ""),
                ("autogen: CPU per call", f"{peer_cpu * 1000:.2f} ms", ""),
                ("inline / autogen: calls a second", f"{calls / wall / peer_rate:.2f}x", "target >= 2x"),
                ("inline / autogen: calls per CPU second", f"{peer_cpu / inline_cpu:.2f}x", "target >= 2x"),
            ]
        scaled = celery_run(args.duels, url)
        if scaled is None:
            rows.append(("celery", "left out", "needs CHAOSLM_TEST_DATABASE_URL and CHAOSLM_TEST_REDIS_URL"))
        else:
            c_wall, c_cpu, c_calls, c_peak, (transactions, rows_written) = scaled
            celery_cpu = c_cpu / max(c_calls, 1)
            rows += [
                ("celery (2 workers): all duels, wall", f"{c_wall:.2f} s", ""),
                ("celery: wall / one duel", f"{c_wall / one_wall:.2f}x", ""),
                ("celery: LLM calls a second", f"{c_calls / c_wall:.0f}", ""),
                ("celery: worker CPU per call", f"{celery_cpu * 1000:.2f} ms", ""),
                ("celery: CPU per call / floor", f"{celery_cpu / floor_cpu:.2f}x", "target <= 3.0x"),
                ("celery: peak worker memory", f"{c_peak / 1024:.0f} MiB", ""),
                ("celery: PostgreSQL transactions per call", f"{transactions / c_calls:.1f}", "polling included"),
                ("celery: PostgreSQL rows written per call", f"{rows_written / c_calls:.1f}", "creation included"),
            ]
        conversations.unlink()
    finally:
        server.terminate()
    print_table(rows)


if __name__ == "__main__":
    main()
