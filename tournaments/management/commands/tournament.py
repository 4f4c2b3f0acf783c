import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from tournaments import design, exports, results, services, state
from tournaments.models import Tournament
from tournaments.spec import SpecError, read_spec
from tournaments.templatetags.tournament_tags import figure, number


class Command(BaseCommand):
    help = "Run a tournament from a YAML spec with a live progress bar, resume one, or print its report."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="create a tournament from SPEC.yaml and run it")
        run.add_argument("spec", type=Path)
        run.add_argument("--json", action="store_true", help="print the final report as JSON")
        run.add_argument("--enqueue", action="store_true", help="start it on the runner, print its id and return")
        resume = sub.add_parser("resume", help="go on with a stopped, paused or crashed tournament")
        resume.add_argument("id", type=int)
        resume.add_argument("--json", action="store_true")
        resume.add_argument("--enqueue", action="store_true")
        resume.add_argument(
            "--stalled-after",
            type=float,
            default=0.0,
            help="restart the tournament's debates in flight that made no progress for this many seconds "
            "(default 0: all of them, as after a crash)",
        )
        report = sub.add_parser("report", help="print a tournament's leaderboard and judge table")
        report.add_argument("id", type=int)
        report.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        # With --json, stdout carries the JSON alone; the size and the progress bar go to stderr.
        console = Console(file=(self.stderr if options.get("json") else self.stdout)._out)
        action = options["action"]
        if action == "run":
            tournament = self._create(options["spec"], console)
            services.start(tournament)
        else:
            tournament = Tournament.objects.filter(pk=options["id"]).first()
            if tournament is None:
                raise CommandError(f"there is no tournament {options['id']}")
            if action == "resume":
                services.resume(tournament, stalled_after=options["stalled_after"])
        if action in ("run", "resume"):
            if options["enqueue"]:
                self.stdout.write(str(tournament.pk))
                return
            self._watch(tournament, console)
        tournament.refresh_from_db()
        if options["json"]:
            self.stdout.write(json.dumps(exports.as_json(tournament), indent=2))
        else:
            self._print_report(tournament, console)

    def _create(self, path: Path, console: Console) -> Tournament:
        try:
            spec = read_spec(path)
            size = design.estimate(
                len(spec.questions),
                len(spec.debaters),
                len(spec.judges),
                spec.sides,
                spec.repeats,
                spec.options.get("turns", 6),
            )
            console.print(f"[bold]{spec.name}[/]: {size.sentence()}", highlight=False)
            return services.create_tournament(
                name=spec.name,
                debaters=spec.debaters,
                judges=spec.judges,
                questions=spec.questions,
                options=spec.options,
                sides=spec.sides,
                repeats=spec.repeats,
                concurrency=spec.concurrency,
                visibility=spec.visibility,
            )
        except (SpecError, services.TournamentError) as error:
            raise CommandError(str(error)) from None

    def _watch(self, tournament: Tournament, console: Console) -> None:
        """The live progress bar, until the tournament settles (Ctrl-C leaves it resumable)."""
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
        )
        try:
            with Progress(*columns, console=console, transient=False) as bar:
                task = bar.add_task(tournament.name, total=None, detail="")
                while True:
                    tournament.refresh_from_db()
                    figures = state.progress(tournament)
                    detail = f"{figures.running} running · {figures.failed} failed"
                    if figures.eta_text:
                        detail += f" · {figures.eta_text}"
                    bar.update(task, total=figures.total, completed=figures.done + figures.failed, detail=detail)
                    if services.is_settled(tournament.pk):
                        break
                    time.sleep(0.3)
        except KeyboardInterrupt:
            raise CommandError(
                f"stopped; the tournament goes on with `manage.py tournament resume {tournament.pk}`"
            ) from None

    def _print_report(self, tournament: Tournament, console: Console) -> None:
        report = results.report(tournament)
        figures = state.progress(tournament)
        console.print(
            f"[bold]{tournament.name}[/] (#{tournament.pk}): {tournament.get_status_display()}, "
            f"{figures.done} of {figures.total} debates done, {figures.failed} failed.",
            highlight=False,
        )
        if not report.verdicts:
            console.print("No verdicts yet: the leaderboard and the judges' figures fill in as they land.")
            return
        board = Table(title="Leaderboard")
        for column in ("#", "Debater", "Rating", "95% interval", "W", "L", "Win rate FOR", "Win rate AGAINST"):
            board.add_column(column)
        for rank, r in enumerate(report.ratings, start=1):
            board.add_row(
                str(rank),
                r.name,
                number(r.rating),
                f"{number(r.ci_low)} to {number(r.ci_high)}",
                str(r.wins),
                str(r.losses),
                figure(r.win_rate_for, "percent"),
                figure(r.win_rate_against, "percent"),
            )
        console.print(board)
        judges = Table(title="Judges")
        for column in ("Judge", "Verdicts", "FOR wins", "Accuracy", "Self-consistency", "Contradictions"):
            judges.add_column(column)
        for j in report.judges:
            judges.add_row(
                j.name,
                str(j.verdicts),
                figure(j.for_win_rate, "percent"),
                figure(j.accuracy, "percent"),
                figure(j.self_consistency, "percent"),
                figure(j.contradiction_rate, "percent"),
            )
        console.print(judges)
        method = {"cohen": " (Cohen's kappa)", "fleiss": " (Fleiss' kappa)"}.get(report.panel.method, "")
        console.print(
            f"Panel agreement{method}: {figure(report.panel.agreement)}. "
            f"Score correlation: {figure(report.panel.score_correlation)}.",
            highlight=False,
        )
