"""How close a six-turn judged duel comes to its critical path.

Runs one duel against the test server (its own process) at a fixed latency per call and
prints the wall time against the ideal critical path (19 calls x latency) and the fully
sequential design (30 calls x latency), and the orchestration CPU time per LLM call.
Targets: wall <= 1.10x the critical path (<= 0.70x sequential); CPU < 5 ms a call.

    uv run python bench/duel_critical_path.py [--latency 0.2] [--runs 5] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_with_temp_db, new_duel, parse_args, print_table, start_test_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per call before the reply")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reply-words", type=int, default=40, help="words (and so stream chunks) per reply")
    args = parse_args(parser, {"latency": 0.01, "runs": 1, "reply_words": 5})
    server, url = start_test_server(args.latency, reply_words=args.reply_words)
    try:
        django_with_temp_db(url)
        from debates.engine import RunStats, run_debate
        from debates.models import Debate

        walls, cpus, calls = [], [], 0
        asyncio.run(run_debate(new_duel(turns=1).pk))  # warm up: imports, client, connections
        for _ in range(args.runs):
            stats = RunStats()
            debate = asyncio.run(run_debate(new_duel().pk, stats=stats))
            assert debate.status == Debate.Status.COMPLETED, debate.error_text
            walls.append(stats.wall_seconds)
            cpus.append(stats.cpu_seconds / stats.calls)
            calls = stats.calls
    finally:
        server.terminate()
    wall = statistics.median(walls)
    critical, sequential = 19 * args.latency, 30 * args.latency
    cpu_ms = statistics.median(cpus) * 1000
    rows = [
        ("LLM calls per duel", f"{calls}", ""),
        ("latency per call", f"{args.latency * 1000:.0f} ms", ""),
        ("words (stream chunks) per reply", f"{args.reply_words}", ""),
        ("wall time (median of runs)", f"{wall:.3f} s", ""),
        ("ideal critical path (19 calls)", f"{critical:.3f} s", ""),
        ("fully sequential (30 calls)", f"{sequential:.3f} s", ""),
        ("wall / critical path", f"{wall / critical:.3f}x", "target <= 1.10x"),
        ("wall / sequential", f"{wall / sequential:.3f}x", "target <= 0.70x"),
        ("orchestration CPU per call", f"{cpu_ms:.2f} ms", "target < 5 ms"),
    ]
    print_table(rows)


if __name__ == "__main__":
    main()
