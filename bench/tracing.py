"""What tracing costs a model call: CPU per call through the gateway with tracing off, on, and without the hooks.

The gateway's `chat` now records each call's metrics and, when tracing is on, a GenAI client span
(chaoslm/tracing.py). Three ways of making the same calls, against the test server in its own process:

- baseline: the gateway as it was, without the hooks (`gateway._chat`, which `chat` wraps);
- tracing off: `chat` as every deployment without OTEL_EXPORTER_OTLP_ENDPOINT runs it (the metrics, one flag test);
- tracing on: `chat` with spans exported over OTLP/HTTP (the SDK's batch processor) to a sink in another process,
  its CPU counted: the processor's thread is this process's.

Each call is asked for whole (the cheaper path, so the hooks weigh most). The modes run side by side in short
blocks, round after round, the order turning; the ratios are the median round's (`measure` says why).

Target: tracing off within 1.02x of the baseline.

    uv run python bench/tracing.py [--calls 40] [--rounds 60] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_with_temp_db, free_port, parse_args, print_table, start_test_server

# An OTLP/HTTP endpoint that takes whatever it is sent: the spans' cost is the sender's, not the collector's.
SINK = """
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=40, help="calls a block (a round is a block of each mode)")
    parser.add_argument("--rounds", type=int, default=60)
    args = parse_args(parser, {"calls": 5, "rounds": 3})
    llm, llm_url = start_test_server(0.0, 0.0, 40)
    port = free_port()
    sink = subprocess.Popen([sys.executable, "-c", SINK, str(port)])
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
    try:
        django_with_temp_db(llm_url)
        best = asyncio.run(measure(args.calls, args.rounds))
    finally:
        llm.terminate()
        sink.terminate()
    print(
        f"{args.rounds} rounds of {args.calls} calls in each mode, side by side; CPU of this process, the median "
        "round's, and the median of each round's ratio to its baseline block"
    )
    print_table(
        [
            ("baseline (no hooks) µs / call", f"{best['baseline'] * 1e6:.0f}", "the gateway as it was"),
            ("tracing off µs / call", f"{best['off'] * 1e6:.0f}", f"{best['off/baseline']:.3f}x; target <= 1.02x"),
            (
                "tracing off: the hooks alone µs / call",
                f"{best['hooks'] * 1e6:.1f}",
                f"{1 + best['hooks'] / best['baseline']:.3f}x of a baseline call; target <= 1.02x",
            ),
            (
                "tracing on µs / call",
                f"{best['on'] * 1e6:.0f}",
                f"{best['on/baseline']:.3f}x; spans sent over OTLP/HTTP",
            ),
        ]
    )


async def measure(calls: int, rounds: int) -> dict[str, float]:
    """CPU per call of each mode, and each mode's ratio to the baseline: the medians over the rounds.

    A round is a block of `calls` calls in each mode, back to back, the order turning from round to round. On a
    shared machine, CPU per call drifts with what else runs (caches, a sibling hyperthread) by far more than the
    hooks weigh; a ratio of blocks run side by side sees the same drift on both, and the median over many rounds
    drops a round a burst of load or a collection fell into."""
    from chaoslm import tracing
    from chaoslm.llm import gateway, own_connections
    from chaoslm.llm.endpoints import default_endpoint

    endpoint = default_endpoint()
    messages = [{"role": "user", "content": "Argue for the motion in forty words."}]
    tracing.setup("bench")
    tracer = tracing._tracer
    assert tracer is not None

    async def baseline() -> None:
        await gateway._chat(endpoint, messages, gateway.ChatOptions(), None, gateway.NO_CALLBACKS)

    async def hooked() -> None:
        await gateway.chat(endpoint, messages)

    async def block(mode: str) -> float:
        tracing._tracer = tracer if mode == "on" else None
        call = baseline if mode == "baseline" else hooked
        gc.collect()  # the garbage of the block before is not this one's to collect
        started = time.process_time()
        for _ in range(calls):
            await call()
        if mode == "on":
            tracing.flush()  # the spans' export is part of their cost
        return (time.process_time() - started) / calls

    modes = ["baseline", "off", "on"]
    per_call: dict[str, list[float]] = {mode: [] for mode in modes}
    async with own_connections():
        for mode in modes:  # warm up: connections open, imports done
            await block(mode)
        for number in range(rounds):
            turned = modes[number % 3 :] + modes[: number % 3]
            for mode in turned:
                per_call[mode].append(await block(mode))
        hooks = await hooks_alone(gateway, endpoint, messages, calls * rounds)
    tracing._tracer = tracer
    base = per_call["baseline"]
    return {
        "hooks": hooks,
        **{mode: statistics.median(per_call[mode]) for mode in modes},
        **{
            f"{mode}/baseline": statistics.median(m / b for m, b in zip(per_call[mode], base, strict=True))
            for mode in modes[1:]
        },
    }


async def hooks_alone(gateway: Any, endpoint: Any, messages: list[dict[str, str]], calls: int) -> float:
    """CPU per call of what tracing off adds, alone: `chat` around a stand-in for the call that returns at once
    (the metrics, the flag test), less the stand-in's own. Small enough beside a call that the side-by-side ratio
    cannot show it on a busy machine; this can."""
    result = await gateway._chat(endpoint, messages, gateway.ChatOptions(), None, gateway.NO_CALLBACKS)

    async def answered(*_: Any) -> Any:
        return result

    real, gateway._chat = gateway._chat, answered
    try:
        timings = {}
        for name, call in (("bare", lambda: answered()), ("hooked", lambda: gateway.chat(endpoint, messages))):
            runs = []
            for _ in range(5):
                started = time.process_time()
                for _ in range(calls):
                    await call()
                runs.append((time.process_time() - started) / calls)
            timings[name] = min(runs)
    finally:
        gateway._chat = real
    return timings["hooked"] - timings["bare"]


if __name__ == "__main__":
    main()
