from rich.console import Console

from batches.command import BatchCommand, table
from batches.templatetags.batch_tags import figure, interval, number
from debates.formats import FormatError
from tournaments import design, exports, results, services
from tournaments.models import Tournament
from tournaments.spec import TournamentSpec, read_spec


class Command(BatchCommand):
    kind = services.TOURNAMENT
    report_help = "print a tournament's leaderboard and judge table"
    read_spec = staticmethod(read_spec)
    as_json = staticmethod(exports.as_json)
    create_batch = staticmethod(services.create_tournament)

    def size(self, spec: TournamentSpec) -> str:
        counts = (len(spec.questions), len(spec.debaters), len(spec.judges))
        # The shipped and public cards by name; a format no one may use is refused when the tournament is made.
        offered = services.offered_formats(None)
        formats = [offered[f].fmt if f in offered else f for f in spec.formats]
        try:
            return design.estimate(*counts, spec.sides, spec.repeats, spec.options, formats).sentence()
        except FormatError:
            return "its formats are checked as it is made."

    def print_report(self, tournament: Tournament, console: Console) -> None:
        report = results.report(tournament)
        self.print_heading(tournament, console, "debates")
        if not report.verdicts:
            console.print("No verdicts yet: the leaderboard and the judges' figures fill in as they land.")
            return
        board = table(
            "Leaderboard", ("#", "Debater", "Rating", "95% interval", "W", "L", "Win rate FOR", "Win rate AGAINST")
        )
        for rank, r in enumerate(report.ratings, start=1):
            board.add_row(
                str(rank),
                r.name,
                number(r.rating),
                interval(r, " to "),
                str(r.wins),
                str(r.losses),
                figure(r.win_rate_for, "percent"),
                figure(r.win_rate_against, "percent"),
            )
        console.print(board)
        judges = table("Judges", ("Judge", "Verdicts", "FOR wins", "Accuracy", "Self-consistency", "Contradictions"))
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
            compared = table(
                "Formats compared", ("Format", "Matches judged", "Verdicts", "FOR wins", "Accuracy", "Panel agreement")
            )
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
