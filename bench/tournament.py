"""A tournament's throughput and its report's cost.

1. N two-turn judged duels at concurrency C against the test server at a fixed latency a call, run as a
   tournament on the inline runner (one process, SQLite): its wall time against ceil(N/C) x one duel's
   wall time measured in the same run (target within 1.2x: the scheduler keeps C debates running).
2. The report (Bradley-Terry fit with 1,000 bootstrap replicates, judge and panel figures) over V
   verdicts (target under 1 s at 2,000), and over the finished tournament from the database.

    uv run python bench/tournament.py [--duels 200] [--concurrency 20] [--latency 0.2] [--verdicts 2000]
    uv run python bench/tournament.py --smoke
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_with_temp_db, new_duel, print_table, start_test_server


def one_duel_wall() -> float:
    from debates.engine import run_debate
    from debates.models import Debate

    debate = new_duel(turns=2)
    start = time.perf_counter()
    finished = asyncio.run(run_debate(debate.pk))
    assert finished.status == Debate.Status.COMPLETED, finished.error_text
    return time.perf_counter() - start


def tournament_wall(duels: int, concurrency: int) -> tuple[float, int]:
    """(wall seconds, the tournament's id) for `duels` two-turn duels at `concurrency`."""
    from personas.models import Persona
    from tournaments import services
    from tournaments.models import Tournament
    from tournaments.questions import QuestionSpec

    def persona(name: str) -> services.Contestant:
        return services.Contestant.of(Persona.objects.get(name=name))

    # Two debaters on both sides: two duels a question.
    tournament = services.create_tournament(
        name="Bench",
        debaters=[persona("Ada Sterling"), persona("Marcus Vale")],
        judges=[persona("Judge Ines Okafor")],
        questions=[QuestionSpec(f"Question {i}?", f"Premise {i} holds") for i in range(math.ceil(duels / 2))],
        options={"turns": 2},
        concurrency=concurrency,
    )
    start = time.perf_counter()
    services.TOURNAMENT.start(tournament)
    while not services.TOURNAMENT.is_settled(tournament.pk):
        time.sleep(0.1)
    wall = time.perf_counter() - start
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.COMPLETED
    return wall, tournament.pk


def synthetic_verdicts(count: int) -> tuple[list, list[str], list[str]]:
    """`count` verdicts: 8 debaters of graded strength, 3 judges, each match judged by all three."""
    from batches.stats import Verdict

    rng = random.Random(7)
    debaters = [f"Debater {i}" for i in range(8)]
    judges = [f"Judge {i}" for i in range(3)]
    verdicts = []
    match = 0
    while len(verdicts) < count:
        a, b = rng.sample(range(8), 2)
        match += 1
        for judge in judges:
            if len(verdicts) == count:
                break
            p_for = 1 / (1 + math.exp((b - a) / 3))
            winner = "for" if rng.random() < p_for else "against"
            verdicts.append(
                Verdict(
                    match=match,
                    question=match % 50,
                    judge=judge,
                    repeat=0,
                    debater_for=debaters[a],
                    debater_against=debaters[b],
                    winner=winner,
                    correct=rng.choice(["for", "against", None]),
                    score_for=float(rng.randint(3, 9)),
                    score_against=float(rng.randint(3, 9)),
                    contradicts=rng.random() < 0.1,
                )
            )
    return verdicts, debaters, judges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duels", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--verdicts", type=int, default=2000)
    parser.add_argument("--smoke", action="store_true", help="a small size: 20 duels at concurrency 5, 500 verdicts")
    args = parser.parse_args()
    if args.smoke:
        args.duels, args.concurrency, args.verdicts = 20, 5, 500
    server, url = start_test_server(args.latency)
    try:
        django_with_temp_db(url)
        from batches.stats import load_libraries
        from chaoslm.runner import inline
        from debates.models import Debate
        from tournaments import results
        from tournaments.models import Tournament
        from tournaments.stats import build_report

        one_duel_wall()  # the process's first duel pays one-time costs (connections, templates): not the baseline
        one = one_duel_wall()
        wall, tournament_id = tournament_wall(args.duels, args.concurrency)
        inline.wait_idle()
        waves = math.ceil(args.duels / args.concurrency)
        ideal = waves * one

        verdicts, debaters, judges = synthetic_verdicts(args.verdicts)
        # The first report in a process imports scipy and statsmodels; a serving process does that in the
        # background after its first request (CHAOSLM_PRELOAD_REPORT_LIBRARIES). Measured apart.
        start = time.perf_counter()
        load_libraries()
        import_seconds = time.perf_counter() - start
        start = time.perf_counter()
        build_report(verdicts, debaters, judges)
        report_seconds = time.perf_counter() - start
        start = time.perf_counter()
        results.report(Tournament.objects.get(pk=tournament_id))
        db_report_seconds = time.perf_counter() - start
        spans = [
            (d.finished_at - d.started_at).total_seconds()
            for d in Debate.objects.filter(tournament_match__tournament_id=tournament_id)
        ]
    finally:
        server.terminate()
        server.wait(10)
    print(f"{args.duels} two-turn duels at concurrency {args.concurrency}, {args.latency * 1000:.0f} ms a call")
    print_table(
        [
            ("one duel, alone (s)", f"{one:.2f}", "the baseline, this run (after a first, warm-up duel)"),
            (f"ceil({args.duels}/{args.concurrency}) x one duel (s)", f"{ideal:.2f}", f"{waves} waves"),
            ("tournament wall (s)", f"{wall:.2f}", ""),
            ("tournament / ideal", f"{wall / ideal:.2f}x", "target <= 1.2x"),
            (
                "a duel inside the tournament, mean (s)",
                f"{sum(spans) / len(spans):.2f}",
                "vs alone: the cost of company",
            ),
            (
                "slots busy",
                f"{sum(spans) / (wall * args.concurrency):.0%}",
                "debate time / (wall x concurrency): the scheduler's gaps",
            ),
            (f"report over {args.verdicts} verdicts (s)", f"{report_seconds:.3f}", "target < 1 s (1,000 bootstrap)"),
            ("importing scipy and statsmodels (s)", f"{import_seconds:.2f}", "once a process, in the background"),
            (f"report from the database, {args.duels} verdicts (s)", f"{db_report_seconds:.3f}", "query + fit"),
        ]
    )


if __name__ == "__main__":
    main()
