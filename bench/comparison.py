"""A comparison's throughput and its orchestration cost.

Q arithmetic questions x 4 arms (single agent, a majority of five, Du et al.'s debate of 3 agents and 2 rounds, MAD)
at concurrency C against the test server at a fixed latency a call, run as a comparison on the inline runner (one
process, SQLite), in the same run as:

1. each arm's critical path: one of its debates alone (its calls one after another where they must be, at once
   where its card says so); the comparison's ideal wall is the sum over arms of Q x that path, shared by C slots;
2. one two-turn duel alone: its orchestration CPU per model call (this process's CPU: the test server runs in its
   own), against the comparison's CPU per call.

    uv run python bench/comparison.py [--questions 200] [--concurrency 40] [--latency 0.2]
    uv run python bench/comparison.py --smoke
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import ROOT, django_with_temp_db, new_duel, parse_args, print_table, start_test_server

ARMS = [
    {"format": "single-agent"},
    {"format": "self-consistency", "agents": 5},
    {"format": "multi-agent-debate", "name": "Du et al.", "agents": 3, "options": {"rounds": 2}},
    {"format": "mad", "options": {"rounds": 3}},
]


def calls_of(debates) -> int:
    from debates.models import Event

    return Event.objects.filter(debate__in=debates, tokens_in__gt=0).count()


def timed_debate(debate_id: int) -> tuple[float, float]:
    """(wall, CPU) seconds of one debate run alone."""
    from debates.engine import run_debate
    from debates.models import Debate

    cpu, start = time.process_time(), time.perf_counter()
    finished = asyncio.run(run_debate(debate_id))
    assert finished.status == Debate.Status.COMPLETED, finished.error_text
    return time.perf_counter() - start, time.process_time() - cpu


def requests(persona):
    from comparisons.arms import ArmRequest

    return [
        ArmRequest(a["format"], persona, a.get("name", ""), a.get("agents"), {}, a.get("options", {})) for a in ARMS
    ]


def critical_paths(persona) -> dict[str, float]:
    """Each arm's one debate alone, on a question of the sample (its wall seconds)."""
    from batches.checks import Checks
    from comparisons import arithmetic
    from comparisons.arms import resolve
    from comparisons.services import ComparisonError, material_of
    from debates.setup import SeatChoice, create_debate

    question = arithmetic.generate(1, 3, 99)[0]
    found = Checks(ComparisonError)
    arms = resolve(None, requests(persona), found)
    found.done()
    paths = {}
    for arm in arms:
        debate = create_debate(
            format_name=arm.fmt.name,
            card_source=arm.card_source,
            topic=question.question,
            material=material_of(question),
            seats={key: SeatChoice(spec=c.spec) for key, c in arm.seats.items()},
            options=arm.options,
        )
        paths[arm.name] = timed_debate(debate.pk)[0]
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parse_args(parser, {"questions": 4, "concurrency": 8})
    server, url = start_test_server(args.latency)
    try:
        django_with_temp_db(url)
        from django.core.management import call_command

        call_command("import_formats", str(ROOT / "cards"), verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        from batches.checks import Contestant
        from chaoslm.runner import inline
        from comparisons import arithmetic, selectors, services
        from comparisons.kind import COMPARISON
        from comparisons.models import Comparison
        from debates.models import Debate
        from personas.models import Persona

        persona = Contestant.of(Persona.objects.get(name="Ada Sterling"))
        timed_debate(new_duel(turns=2).pk)  # the process's first debate pays one-time costs: not the baseline
        duel = new_duel(turns=2)
        duel_wall, duel_cpu = timed_debate(duel.pk)
        duel_calls = calls_of(Debate.objects.filter(pk=duel.pk))
        paths = critical_paths(persona)

        comparison = services.create_comparison(
            name="Bench",
            questions=arithmetic.generate(args.questions, 3, 0),
            arms=requests(persona),
            concurrency=args.concurrency,
        )
        cpu, start = time.process_time(), time.perf_counter()
        COMPARISON.start(comparison)
        while not COMPARISON.is_settled(comparison.pk):
            time.sleep(0.1)
        wall, used = time.perf_counter() - start, time.process_time() - cpu
        inline.wait_idle()
        comparison.refresh_from_db()
        assert comparison.status == Comparison.Status.COMPLETED
        debates = selectors.debates_of(comparison)
        calls = calls_of(debates)
        failed = debates.exclude(status=Debate.Status.COMPLETED).count()
        spans = [(d.finished_at - d.started_at).total_seconds() for d in debates if d.started_at and d.finished_at]
        # The first report in a process imports scipy and statsmodels (a serving process does that in the background
        # after its first request): measured apart.
        start = time.perf_counter()
        import statsmodels.stats.contingency_tables
        import statsmodels.stats.proportion  # noqa: F401

        import_seconds = time.perf_counter() - start
        start = time.perf_counter()
        selectors.report(comparison)
        report_seconds = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(10)
    ideal = sum(paths.values()) * args.questions / args.concurrency
    runs = args.questions * len(ARMS)
    print(
        f"{args.questions} questions x {len(ARMS)} arms at concurrency {args.concurrency}, "
        f"{args.latency * 1000:.0f} ms a call"
    )
    print_table(
        [
            *((f"critical path: {name} (s)", f"{path:.2f}", "one debate alone") for name, path in paths.items()),
            ("sum of the arms' critical paths (s)", f"{sum(paths.values()):.2f}", "one question under every arm"),
            (
                f"ideal: sum x {args.questions} / {args.concurrency} (s)",
                f"{ideal:.2f}",
                "every slot busy, every debate at its critical path",
            ),
            ("comparison wall (s)", f"{wall:.2f}", f"{runs} debates, {failed} failed"),
            ("comparison / ideal", f"{wall / ideal:.2f}x", "the scheduler's gaps and the cost of company"),
            (
                "slots busy",
                f"{sum(spans) / (wall * args.concurrency):.0%}",
                "debate time / (wall x concurrency): the scheduler's gaps",
            ),
            (
                "debate time inside / alone",
                f"{sum(spans) / (sum(paths.values()) * args.questions):.2f}x",
                "the cost of company",
            ),
            ("model calls", str(calls), ""),
            ("CPU per call, comparison (ms)", f"{used / calls * 1000:.2f}", "this process: orchestration"),
            (
                "CPU per call, one duel (ms)",
                f"{duel_cpu / duel_calls * 1000:.2f}",
                f"{duel_calls} calls, {duel_wall:.2f} s",
            ),
            ("comparison / duel, CPU per call", f"{used / calls / (duel_cpu / duel_calls):.2f}x", ""),
            ("importing scipy and statsmodels (s)", f"{import_seconds:.2f}", "once a process"),
            (f"report over {runs} runs (s)", f"{report_seconds:.3f}", "read from the database"),
        ]
    )


if __name__ == "__main__":
    main()
