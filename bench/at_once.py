"""Speeches given at once against the same speeches one after another, and a deciding card's orchestration CPU.

1. Wall time: a card whose one round is three answers given at once (`at_once: true`) and a card with the same
   three answers as three speeches, one after another, each run by debates/engine.py against the test server
   (its own process) at a fixed latency per call, on a temporary SQLite database, alternating. The round's time
   is the server's, from the first call's arrival to the last reply; the debate's is the engine's whole run (its
   header, loading and storing). Target: the round given at once takes about one call's latency (1x), not three
   (the speeches in turn, 3x).
2. CPU: cards/multi-agent-debate.yaml (three agents, two rounds: nine answers at once in three waves, then the
   plurality vote) against the judged duel, measured as bench/card_cpu.py measures a card against its code
   format: the format alone (the CPU of `next_steps` per LLM call over a whole debate with canned replies) and
   through the engine against the test server at no latency (RunStats: the format, the database, the LLM client),
   alternating. Target: the card within 1.10x the duel's CPU per call. The engine's per call shares a debate's
   fixed cost (loading, header, finish) among its calls, nine here against the duel's thirty; the cost of each
   further call (from 2 to `--turns` turns, from `--rounds` to 5 rounds) leaves it out.

    uv run python bench/at_once.py [--latency 0.3] [--runs 5] [--rounds 2] [--driver-runs 30] [--engine-runs 5]
        [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import card_cpu
from bench._setup import django_with_temp_db, new_duel, parse_args, print_table, start_test_server
from debates.formats import DebateConfig, SeatInfo
from debates.formats.card import parse_card
from debates.formats.duel import Duel

ROOT = Path(__file__).resolve().parent.parent
SEATS = {"a": "Ada Sterling", "b": "Marcus Vale", "c": "Priya Raman"}
AGENTS = {"agent_1": "Ada Sterling", "agent_2": "Marcus Vale", "agent_3": "Priya Raman"}
HEAD = """\
title: Three answers
seats:
  - {key: a, role: debater, label: A}
  - {key: b, role: debater, label: B}
  - {key: c, role: debater, label: C}
stages:
"""
AT_ONCE = (
    "name: bench-at-once\n"
    + HEAD
    + '  - {speech: answer, seat: [a, b, c], at_once: true, answer: number, prompt: "{topic} {answer_format}"}\n'
)
IN_TURN = (
    "name: bench-in-turn\n"
    + HEAD
    + "".join(
        f'  - {{speech: answer_{k}, seat: {k}, answer: number, prompt: "{{topic}} {{answer_format}}"}}\n' for k in SEATS
    )
)
TOPIC = "What is 7 times 6?"


def card_debate(name: str, text: str, seats: dict[str, str], options: dict[str, int] | None = None):
    from debates.setup import SeatChoice, create_debate
    from personas.models import Persona

    return create_debate(
        format_name=name,
        card_source=text,
        topic=TOPIC,
        seats={key: SeatChoice(persona=Persona.objects.get(name=persona)) for key, persona in seats.items()},
        options=options or {},
    )


def run(debate) -> tuple[float, float, int]:
    """Wall seconds, CPU microseconds per call and calls of one run of `debate` through the engine."""
    from debates.engine import RunStats, run_debate
    from debates.models import Debate

    stats = RunStats()
    finished = asyncio.run(run_debate(debate.pk, stats=stats))
    assert finished.status == Debate.Status.COMPLETED, finished.error_text
    return stats.wall_seconds, stats.cpu_seconds / stats.calls * 1e6, stats.calls


def round_span(control: str, before: int) -> float:
    """Seconds from the first of the calls the server received after its `before`-th to the last one's reply."""
    calls = httpx.get(control + "/requests").json()[before:]
    return max(c["finished"] for c in calls) - min(c["started"] for c in calls)


def walls(control: str, runs: int) -> dict[str, list[float]]:
    """Median wall seconds of the round given at once and of the speeches in turn, alternating runs: the whole
    debate's (the engine's RunStats) and the round's (from the first call's arrival at the server to the last
    reply)."""
    cards = (("at_once", "bench-at-once", AT_ONCE), ("in_turn", "bench-in-turn", IN_TURN))
    for _, name, text in cards:
        run(card_debate(name, text, SEATS))  # warm up: imports, client, connections
    times: dict[str, list[float]] = {f"{key} {part}": [] for key, _, _ in cards for part in ("debate", "round")}
    for _ in range(runs):
        for key, name, text in cards:
            before = len(httpx.get(control + "/requests").json())
            wall, _, calls = run(card_debate(name, text, SEATS))
            assert calls == 3, (name, calls)
            times[f"{key} debate"].append(wall)
            times[f"{key} round"].append(round_span(control, before))
    return {key: statistics.median(values) for key, values in times.items()}


def engine_cpu(mad_text: str, turns: int, rounds: int, runs: int) -> dict[str, tuple[float, int]]:
    """Median engine CPU microseconds per debate of a judged duel at 2 and `turns` turns and of a multi-agent debate
    at `rounds` and 5 rounds, alternating runs; the calls of each. The two sizes of each give the cost of a
    further call, the debate's fixed cost (its loading, header, finish and decision line) taken out."""
    sizes = {
        "duel small": lambda: new_duel(turns=2),
        "duel": lambda: new_duel(turns=turns),
        "mad": lambda: card_debate("multi-agent-debate", mad_text, AGENTS, {"rounds": rounds}),
        "mad large": lambda: card_debate("multi-agent-debate", mad_text, AGENTS, {"rounds": 5}),
    }
    run(new_duel(turns=1)), run(card_debate("multi-agent-debate", mad_text, AGENTS))  # warm up
    cpu: dict[str, list[float]] = {key: [] for key in sizes}
    calls: dict[str, int] = {}
    for _ in range(runs):
        for key, make in sizes.items():
            _, per_call, calls[key] = run(make())
            cpu[key].append(per_call * calls[key])
    return {key: (statistics.median(values), calls[key]) for key, values in cpu.items()}


def answers(step):
    """card_cpu's canned replies, and an answer for a speech that gives one."""
    if step.json_schema is not None and "answer" in step.json_schema.get("properties", {}):
        data = {"reasoning": "Seven sixes.", "answer": "42"}
        return json.dumps(data), data
    return card_cpu.reply(step)


def driver_cpu(mad, turns: int, rounds: int, runs: int) -> tuple[float, float]:
    """Median `next_steps` CPU microseconds per call of the duel and of the multi-agent debate, alternating."""
    persona = "You are a debater. " * 20
    duel_config = DebateConfig(
        format="duel",
        topic="Should cities ban private cars?",
        premise="Cities should ban private cars",
        options={"turns": turns},
        seats=(
            SeatInfo("a", "debater", "Ada", "for", persona),
            SeatInfo("b", "debater", "Bob", "against", persona),
            SeatInfo("judge", "judge", "Judy", "", persona),
        ),
    )
    mad_config = DebateConfig(
        format="multi-agent-debate",
        topic=TOPIC,
        options={"rounds": rounds},
        seats=tuple(SeatInfo(key, "debater", name, "", persona) for key, name in AGENTS.items()),
    )
    pairs = (("duel", Duel(), duel_config), ("card", mad, mad_config))
    per_call: dict[str, list[float]] = {"duel": [], "card": []}
    for _, fmt, config in pairs:
        card_cpu.drive(fmt, config, answers)  # warm up: imports, the card's layout cache
    for _ in range(runs):
        for key, fmt, config in pairs:
            cpu, calls = card_cpu.drive(fmt, config, answers)
            per_call[key].append(cpu / calls * 1e6)
    return statistics.median(per_call["duel"]), statistics.median(per_call["card"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per call before the reply")
    parser.add_argument("--runs", type=int, default=5, help="debates of each card at that latency")
    parser.add_argument("--turns", type=int, default=6, help="the duel's turns")
    parser.add_argument("--rounds", type=int, default=2, help="the multi-agent debate's rounds after the first (1-4)")
    parser.add_argument("--driver-runs", type=int, default=30, help="debates of each through the format alone")
    parser.add_argument("--engine-runs", type=int, default=5, help="debates of each through the engine")
    args = parse_args(parser, {"latency": 0.01, "runs": 1, "turns": 3, "driver_runs": 1, "engine_runs": 1})
    if args.turns <= 2 or not 1 <= args.rounds < 5:
        parser.error("the further calls' figures need --turns above 2 and --rounds from 1 to 4")
    mad_text = (ROOT / "cards" / "multi-agent-debate.yaml").read_text()
    driver_duel, driver_mad = driver_cpu(parse_card(mad_text), args.turns, args.rounds, args.driver_runs)

    server, url = start_test_server(args.latency, reply_words=40)
    try:
        django_with_temp_db(url)
        control = url.removesuffix("/v1") + "/_control"
        wall = walls(control, args.runs)
        # The CPU figures at no latency, as bench/card_cpu.py's: the same server, told over its control endpoint.
        httpx.post(control + "/config", json={"latency": 0.0}).raise_for_status()
        engine = engine_cpu(mad_text, args.turns, args.rounds, args.engine_runs)
    finally:
        server.terminate()
    latency = args.latency
    (duel_cpu, duel_calls), (mad_cpu, mad_calls) = engine["duel"], engine["mad"]
    engine_duel, engine_mad = duel_cpu / duel_calls, mad_cpu / mad_calls
    duel_span = f"{engine['duel small'][1]} to {duel_calls}"
    further_duel = (duel_cpu - engine["duel small"][0]) / (duel_calls - engine["duel small"][1])
    mad_span = f"{mad_calls} to {engine['mad large'][1]}"
    further_mad = (engine["mad large"][0] - mad_cpu) / (engine["mad large"][1] - mad_calls)
    print_table(
        [
            ("latency per call", f"{latency * 1000:.0f} ms", f"{args.runs} runs of each, alternating"),
            ("three answers at once: the round", f"{wall['at_once round']:.3f} s", "first call in to last reply"),
            ("the same three in turn: the round", f"{wall['in_turn round']:.3f} s", "three speeches"),
            ("round at once / one call", f"{wall['at_once round'] / latency:.2f}x", "target about 1x"),
            ("round in turn / one call", f"{wall['in_turn round'] / latency:.2f}x", "about 3x"),
            ("round at once / in turn", f"{wall['at_once round'] / wall['in_turn round']:.3f}x", "about 0.33x"),
            ("three answers at once: the debate", f"{wall['at_once debate']:.3f} s", "the engine's whole run"),
            ("the same three in turn: the debate", f"{wall['in_turn debate']:.3f} s", ""),
            ("debate at once / in turn", f"{wall['at_once debate'] / wall['in_turn debate']:.3f}x", ""),
            ("format alone: judged duel CPU per call", f"{driver_duel:.1f} us", f"{args.driver_runs} runs, baseline"),
            ("format alone: multi-agent-debate per call", f"{driver_mad:.1f} us", f"3 agents, {args.rounds} rounds"),
            ("format alone: multi-agent-debate / duel", f"{driver_mad / driver_duel:.3f}x", "target <= 1.10x"),
            ("engine: judged duel CPU per call", f"{engine_duel:.0f} us", f"{duel_calls} calls, baseline"),
            ("engine: multi-agent-debate CPU per call", f"{engine_mad:.0f} us", f"{mad_calls} calls"),
            ("engine: multi-agent-debate / duel", f"{engine_mad / engine_duel:.3f}x", "target <= 1.10x"),
            ("engine: judged duel, each further call", f"{further_duel:.0f} us", f"{duel_span} calls, baseline"),
            ("engine: multi-agent-debate, each further call", f"{further_mad:.0f} us", f"{mad_span} calls"),
            ("engine: further call, card / duel", f"{further_mad / further_duel:.3f}x", "target <= 1.10x"),
        ]
    )


if __name__ == "__main__":
    main()
