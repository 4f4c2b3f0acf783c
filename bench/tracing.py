"""What tracing costs a model call: CPU per call through the gateway with tracing off, on, and without the hooks.

The gateway's `chat` now records each call's metrics and, when tracing is on, a GenAI client span
(chaoslm/tracing.py). Three ways of making the same calls, against the test server in its own process:

- baseline: the gateway as it was, without the hooks (`gateway._chat`, which `chat` wraps);
- tracing off: `chat` as every deployment without OTEL_EXPORTER_OTLP_ENDPOINT runs it (the metrics, one flag test);
- tracing on: `chat` with spans exported over OTLP/HTTP (the SDK's batch processor) to a sink in another process,
  its CPU counted: the processor's thread is this process's.

Each call is asked for whole (the cheaper path, so the hooks weigh most). The modes alternate in rounds and each
keeps its best round: what one leaves behind (the collector, the exporter's thread) weighs least on another.

Target: tracing off within 1.02x of the baseline.

    uv run python bench/tracing.py [--calls 400] [--rounds 5] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

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
    parser.add_argument("--calls", type=int, default=400, help="calls a round, in each mode")
    parser.add_argument("--rounds", type=int, default=5)
    args = parse_args(parser, {"calls": 20, "rounds": 1})
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
    base = best["baseline"]
    print(f"{args.calls} calls a round, {args.rounds} rounds, the best round of each; CPU of this process")
    print_table(
        [
            ("baseline (no hooks) µs / call", f"{base * 1e6:.0f}", "the gateway as it was"),
            ("tracing off µs / call", f"{best['off'] * 1e6:.0f}", f"{best['off'] / base:.3f}x; target <= 1.02x"),
            ("tracing on µs / call", f"{best['on'] * 1e6:.0f}", f"{best['on'] / base:.3f}x; spans sent over OTLP/HTTP"),
        ]
    )


async def measure(calls: int, rounds: int) -> dict[str, float]:
    from chaoslm import tracing
    from chaoslm.llm import gateway, own_connections
    from chaoslm.personas.models import default_endpoint

    endpoint = default_endpoint()
    messages = [{"role": "user", "content": "Argue for the motion in forty words."}]
    tracing.setup("bench")
    tracer = tracing._tracer
    assert tracer is not None

    async def baseline() -> None:
        await gateway._chat(endpoint, messages, gateway.ChatOptions(), None, gateway.NO_CALLBACKS)

    async def hooked() -> None:
        await gateway.chat(endpoint, messages)

    async def one_round(mode: str) -> float:
        tracing._tracer = tracer if mode == "on" else None
        call = baseline if mode == "baseline" else hooked
        started = time.process_time()
        for _ in range(calls):
            await call()
        if mode == "on":
            tracing.flush()  # the spans' export is part of their cost
        return (time.process_time() - started) / calls

    best = {"baseline": float("inf"), "off": float("inf"), "on": float("inf")}
    async with own_connections():
        for mode in best:  # warm up: connections open, imports done
            await one_round(mode)
        for _ in range(rounds):
            for mode in best:
                best[mode] = min(best[mode], await one_round(mode))
    tracing._tracer = tracer
    return best


if __name__ == "__main__":
    main()
