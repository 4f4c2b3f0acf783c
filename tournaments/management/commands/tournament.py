from pathlib import Path
from typing import Any

from django.core.management.base import CommandError
from rich.console import Console
from rich.table import Table

from batches.command import BatchCommand
from batches.panel import BatchError
from batches.spec import SpecError
from batches.templatetags.batch_tags import figure, number
from tournaments import design, exports, results, services
from tournaments.models import Tournament
from tournaments.spec import read_spec


class Command(BatchCommand):
    help = "Run a tournament from a YAML spec with a live progress bar, resume one, or print its report."
    kind = services.TOURNAMENT
    report_help = "print a tournament's leaderboard and judge table"

    def as_json(self, batch: Tournament) -> dict[str, Any]:
        return exports.as_json(batch)

    def create(self, path: Path, console: Console, owner: Any) -> Tournament:
        try:
            spec = read_spec(path)
            size = design.estimate(
                len(spec.questions),
                len(spec.debaters),
                len(spec.judges),
                spec.sides,
                spec.repeats,
                spec.options,
                tuple(spec.formats),
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
                owner=owner,
                visibility=spec.visibility,
                formats=spec.formats,
                moderator=spec.moderator,
                arena=spec.arena,
            )
        except (SpecError, BatchError) as error:
            raise CommandError(str(error)) from None

    def print_report(self, tournament: Tournament, console: Console) -> None:
        report = results.report(tournament)
        figures = services.TOURNAMENT.progress(tournament)
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
        if report.formats:
            compared = Table(title="Formats compared")
            for column in ("Format", "Matches judged", "Verdicts", "FOR wins", "Accuracy", "Panel agreement"):
                compared.add_column(column)
            for f in report.formats:
                compared.add_row(
                    f.name.capitalize(),
                    str(f.matches),
                    str(f.verdicts),
                    figure(f.for_win_rate, "percent"),
                    figure(f.accuracy, "percent"),
                    figure(f.agreement),
                )
            console.print(compared)
        method = {"cohen": " (Cohen's kappa)", "fleiss": " (Fleiss' kappa)"}.get(report.panel.method, "")
        console.print(
            f"Panel agreement{method}: {figure(report.panel.agreement)}. "
            f"Score correlation: {figure(report.panel.score_correlation)}.",
            highlight=False,
        )
