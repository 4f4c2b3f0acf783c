"""What the embedded model's slots gain, and what a first debate costs on it: the real SmolLM2-135M served by
llama.cpp's server (chaoslm/llm/engine.py) with 4 slots, on a port of its own.

- Tokens a second and calls a second at 1, 2 and 4 concurrent calls, each as a ratio to 1 call in the same run
  (the same server, the same prompt, `--rounds` rounds of each, interleaved so a machine that gets busier slows
  them all alike). Continuous batching should make 2 calls cost less than twice one.
- The default duel's wall: the new-debate form's defaults for the embedded model (2 turns, 60 words, replies
  capped at CHAOSLM_LOCAL_MAX_TOKENS), `--debates` of them one after another. Goal: 3 minutes or less on two
  cores.
- The loop and echo rates of those debates' replies (chaoslm/llm/echo.py: `is_loop(text)`,
  `echoes(prompt, text)`).

    uv run python bench/embedded.py [--rounds 3] [--tokens 64] [--debates 3] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import PRODUCTION_LIKE, ROOT, free_port, parse_args, print_table

LEVELS = (1, 2, 4)
DUEL_GOAL = 180.0
PROMPT = [{"role": "user", "content": "Argue in three sentences that cities should have more trees."}]


def setup(slots: int, max_tokens: int) -> None:
    folder = tempfile.mkdtemp(prefix="chaoslm-bench-")
    os.environ.update(PRODUCTION_LIKE)
    os.environ.update(
        {
            "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
            "CHAOSLM_TRANSCRIPTS_DIR": folder,
            "OPENAI_BASE_URL": "",
            "OPENAI_API_KEY": "",
            "CHAOSLM_LOCAL_MODEL_PORT": str(free_port()),
            "CHAOSLM_LOCAL_SLOTS": str(slots),
            "CHAOSLM_LOCAL_MAX_TOKENS": str(max_tokens),
            "DJANGO_SETTINGS_MODULE": "config.settings",
        }
    )
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("import_personas", str(ROOT / "personas" / "samples"), verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115


async def concurrent(endpoint, calls: int, tokens: int) -> tuple[float, int]:
    """`calls` calls at once: the wall and the tokens written."""
    from chaoslm.llm import ChatOptions, Policy, chat

    options = ChatOptions(max_tokens=tokens, temperature=0)
    started = time.perf_counter()
    results = await asyncio.gather(*(chat(endpoint, PROMPT, options, policy=Policy(timeout=120)) for _ in range(calls)))
    return time.perf_counter() - started, sum(r.completion_tokens for r in results)


def slots_table(rounds: int, tokens: int) -> list[tuple[str, str, str]]:
    from chaoslm.llm.endpoints import default_endpoint

    endpoint = default_endpoint()
    asyncio.run(concurrent(endpoint, 1, 4))  # the first call warms the server
    walls = {n: 0.0 for n in LEVELS}
    written = {n: 0 for n in LEVELS}
    for _ in range(rounds):
        for n in LEVELS:
            wall, count = asyncio.run(concurrent(endpoint, n, tokens))
            walls[n] += wall
            written[n] += count
    rows = []
    base_tokens = written[1] / walls[1]
    base_calls = rounds / walls[1]
    for n in LEVELS:
        rate = written[n] / walls[n]
        calls = rounds * n / walls[n]
        rows.append((f"{n} at once: tokens/s", f"{rate:.1f}", f"{rate / base_tokens:.2f}x one call"))
        rows.append((f"{n} at once: calls/s", f"{calls:.3f}", f"{calls / base_calls:.2f}x one call"))
    return rows


def duel_table(debates: int) -> list[tuple[str, str, str]]:
    from chaoslm.llm import echo
    from debates.engine import run_debate
    from debates.forms import SHORT_WITH_EMBEDDED
    from debates.models import Debate, Event
    from debates.setup import SeatChoice, create_debate
    from personas.models import Persona

    def seat(name: str) -> SeatChoice:
        return SeatChoice(persona=Persona.objects.get(name=name))

    walls, replies, loops, echoes = [], 0, 0, 0
    for _ in range(debates):
        debate = create_debate(
            format_name="duel",
            topic="Should cities ban private cars?",
            premise="Cities should ban private cars",
            seats={"a": seat("Ada Sterling"), "b": seat("Marcus Vale"), "judge": seat("Judge Ines Okafor")},
            options={"turns": SHORT_WITH_EMBEDDED["turns"], "word_limit": SHORT_WITH_EMBEDDED["word_limit"]},
        )
        started = time.perf_counter()
        finished = asyncio.run(run_debate(debate.pk))
        walls.append(time.perf_counter() - started)
        if finished.status != Debate.Status.COMPLETED:
            raise SystemExit(f"the duel did not finish: {finished.status} {finished.error_text}")
        for event in Event.objects.filter(debate=debate).exclude(prompt="").exclude(content=""):
            replies += 1
            loops += echo.is_loop(event.content)
            echoes += echo.echoes(event.prompt, event.content)
    walls.sort()
    median = walls[len(walls) // 2]
    return [
        ("default duel wall (median)", f"{median:.1f} s", f"goal <= {DUEL_GOAL:.0f} s; {len(walls)} duels"),
        ("replies that loop", f"{loops}/{replies}", f"{loops / max(1, replies):.0%}"),
        ("replies that echo their prompt", f"{echoes}/{replies}", f"{echoes / max(1, replies):.0%}"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64, help="tokens a call writes")
    parser.add_argument("--debates", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=160, help="CHAOSLM_LOCAL_MAX_TOKENS for the duels")
    # The smoke size runs no duel: on SmolLM2 one takes minutes, longer than the rest of the bench.
    args = parse_args(parser, {"rounds": 1, "tokens": 8, "debates": 0})
    setup(slots=max(LEVELS), max_tokens=args.max_tokens)
    from chaoslm.llm import local_model

    started = time.perf_counter()
    process = local_model.start(wait=300)
    try:
        rows = [("model start (to a first answer)", f"{time.perf_counter() - started:.1f} s", "")]
        rows += slots_table(args.rounds, args.tokens)
        if args.debates:
            rows += duel_table(args.debates)
    finally:
        process.terminate()
        process.wait(10)
    print_table(rows)


if __name__ == "__main__":
    main()
