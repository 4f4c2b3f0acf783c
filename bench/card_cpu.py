"""A card debate's orchestration CPU per call against the code format it copies, in the same run.

1. The formats alone: the judged duel (debates/formats/duel.py) and cards/duel-card.yaml, then classic and
   cards/classic-card.yaml, over the same debate with canned replies, driven as the engine drives a format (after
   each wave of landed steps it asks the format for the next). The figure is the CPU time of those `next_steps`
   calls (prompts, message lists, readiness) per LLM call.
2. Through the engine: a judged duel and a duel-card debate run by debates/engine.py against the test server (its
   own process, no latency) on a temporary SQLite database; the figure is the engine's own CPU per call
   (RunStats: the format, the database, the LLM client), as bench/duel_critical_path.py reports it.

Runs alternate between code and card so both see the same machine. Target: a card within 1.10x its code format.
Parsing a card (once per text: card_format is cached) is shown apart.

    uv run python bench/card_cpu.py [--turns 6] [--runs 30] [--engine-runs 5] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_with_temp_db, new_duel, parse_args, print_table, start_test_server
from debates.formats import DebateConfig, Record, SeatInfo
from debates.formats.card import parse_card
from debates.formats.duel import Duel
from debates.formats.moderated import Classic

ROOT = Path(__file__).resolve().parent.parent


def reply(step):
    if step.kind == "SCORE":
        data = {"score": 6, "reasoning": "Sound."}
        return json.dumps(data), data
    if step.step == "confirm_winner":
        return "Bob", {}
    if step.step == "verdict_json":
        data = {"winner": "Bob", "scores": {"Ada": 6, "Bob": 8}}
        return json.dumps(data), data
    return f"Statement {step.ordinal}: " + "words " * 120, {}


def drive(fmt, config, answer=reply) -> tuple[float, int]:
    """CPU seconds spent in `next_steps` over one whole debate, and the LLM calls it made (`answer` gives each
    call's reply and data)."""
    records: list[Record] = []
    cpu, calls = 0.0, 0
    while True:
        start = time.process_time()
        plan = fmt.next_steps(config, records)
        cpu += time.process_time() - start
        if not plan.steps:
            return cpu, calls
        for step in plan.steps:
            content, data = answer(step) if step.calls_llm else (step.content, {})
            calls += step.calls_llm
            records.append(
                Record(step.ordinal, step.kind, step.seat, step.step, step.prompt, content, {**step.data, **data})
            )


def compare(code, card, config, runs: int) -> tuple[float, float, int]:
    """Median CPU microseconds per call of each, alternating runs; and the calls per debate."""
    per_call: dict[str, list[float]] = {"code": [], "card": []}
    calls = 0
    drive(code, config), drive(card, config)  # warm up: imports, the card's layout cache
    for _ in range(runs):
        for key, fmt in (("code", code), ("card", card)):
            cpu, calls = drive(fmt, config)
            per_call[key].append(cpu / calls * 1e6)
    return statistics.median(per_call["code"]), statistics.median(per_call["card"]), calls


def engine_cpu(duel_text: str, turns: int, runs: int) -> tuple[float, float, int]:
    """Median engine CPU microseconds per call of a judged duel and of a duel-card debate, alternating runs."""
    server, url = start_test_server(0.0, reply_words=40)
    try:
        django_with_temp_db(url)
        from debates.engine import RunStats, run_debate
        from debates.models import Debate
        from debates.setup import SeatChoice, create_debate
        from personas.models import Persona

        def card_debate(turns: int) -> Debate:
            seat = lambda name: SeatChoice(persona=Persona.objects.get(name=name))  # noqa: E731
            return create_debate(
                format_name="duel-card",
                card_source=duel_text,
                topic="Should cities ban private cars?",
                premise="Cities should ban private cars",
                seats={"a": seat("Ada Sterling"), "b": seat("Marcus Vale"), "judge": seat("Judge Ines Okafor")},
                options={"turns": turns},
            )

        def cpu_per_call(debate: Debate) -> tuple[float, int]:
            stats = RunStats()
            finished = asyncio.run(run_debate(debate.pk, stats=stats))
            assert finished.status == Debate.Status.COMPLETED, finished.error_text
            return stats.cpu_seconds / stats.calls * 1e6, stats.calls

        cpu_per_call(new_duel(turns=1)), cpu_per_call(card_debate(1))  # warm up: imports, client, connections
        code, card, calls = [], [], 0
        for _ in range(runs):
            code.append(cpu_per_call(new_duel(turns=turns))[0])
            value, calls = cpu_per_call(card_debate(turns))
            card.append(value)
    finally:
        server.terminate()
    return statistics.median(code), statistics.median(card), calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=6, help="the duel's turns (classic: its free turns)")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--engine-runs", type=int, default=5, help="debates of each through the engine")
    args = parse_args(parser, {"turns": 2, "runs": 1, "engine_runs": 1})
    duel_text = (ROOT / "cards" / "duel-card.yaml").read_text()
    classic_text = (ROOT / "cards" / "classic-card.yaml").read_text()
    start = time.process_time()
    duel_card = parse_card(duel_text)
    parse_ms = (time.process_time() - start) * 1000
    classic_card = parse_card(classic_text)

    persona = "You are a debater. " * 20
    duel = DebateConfig(
        format="duel",
        topic="Should cities ban private cars?",
        premise="Cities should ban private cars",
        options={"turns": args.turns},
        seats=(
            SeatInfo("a", "debater", "Ada", "for", persona),
            SeatInfo("b", "debater", "Bob", "against", persona),
            SeatInfo("judge", "judge", "Judy", "", persona),
        ),
    )
    classic = DebateConfig(
        format="classic",
        topic="Should cities ban private cars?",
        options={"free_turns": args.turns},
        seats=(
            SeatInfo("moderator", "moderator", "Mo", "", persona),
            SeatInfo("pro", "debater", "Pam", "pro", persona),
            SeatInfo("con", "debater", "Cal", "con", persona),
        ),
    )
    duel_code, duel_cardµ, duel_calls = compare(Duel(), duel_card, duel, args.runs)
    classic_code, classic_cardµ, classic_calls = compare(Classic(), classic_card, classic, args.runs)
    rows = [
        ("runs (alternating code, card)", f"{args.runs}", ""),
        ("judged duel: LLM calls per debate", f"{duel_calls}", f"{args.turns} turns"),
        ("judged duel (code): CPU per call", f"{duel_code:.1f} us", "baseline"),
        ("duel-card: CPU per call", f"{duel_cardµ:.1f} us", ""),
        ("duel-card / judged duel", f"{duel_cardµ / duel_code:.3f}x", "target <= 1.10x"),
        ("classic: LLM calls per debate", f"{classic_calls}", f"{args.turns} free turns"),
        ("classic (code): CPU per call", f"{classic_code:.1f} us", "baseline"),
        ("classic-card: CPU per call", f"{classic_cardµ:.1f} us", ""),
        ("classic-card / classic", f"{classic_cardµ / classic_code:.3f}x", "target <= 1.10x"),
        ("parsing duel-card.yaml (once per text)", f"{parse_ms:.1f} ms", "cached by card_format"),
    ]
    engine_code, engine_card, engine_calls = engine_cpu(duel_text, args.turns, args.engine_runs)
    rows += [
        ("engine runs (alternating duel, duel-card)", f"{args.engine_runs}", f"{engine_calls} calls each"),
        ("engine: judged duel CPU per call", f"{engine_code:.0f} us", "baseline"),
        ("engine: duel-card CPU per call", f"{engine_card:.0f} us", ""),
        ("engine: duel-card / judged duel", f"{engine_card / engine_code:.3f}x", "target <= 1.10x"),
    ]
    print_table(rows)


if __name__ == "__main__":
    main()
