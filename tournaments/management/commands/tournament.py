from rich.console import Console

from batches.command import BatchCommand, table
from batches.templatetags.batch_tags import interval, stated
from tournaments import exports, results, services
from tournaments.models import Tournament
from tournaments.spec import TournamentSpec, read_spec


class Command(BatchCommand):
    kind = services.TOURNAMENT
    report_help = "print a tournament's leaderboard and judge table"
    read_spec = staticmethod(read_spec)
    as_json = staticmethod(exports.as_json)
    check_batch = staticmethod(services.check_tournament)
    create_batch = staticmethod(services.create_tournament)

    def size(self, spec: TournamentSpec, checked: services.Checked) -> str:
        # The checks' own size: its formats resolved for the owner, so their private cards count as any other.
        return checked.size.sentence()

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
                stated(r.rating),
                interval(r, " to "),
                str(r.wins),
                str(r.losses),
                stated(r.win_rate_for, "percent"),
                stated(r.win_rate_against, "percent"),
            )
        console.print(board)
        judges = table("Judges", ("Judge", "Verdicts", "FOR wins", "Accuracy", "Self-consistency", "Contradictions"))
        for j in report.judges:
            judges.add_row(
                j.name,
                str(j.verdicts),
                stated(j.for_win_rate, "percent"),
                stated(j.accuracy, "percent"),
                stated(j.self_consistency, "percent"),
                stated(j.contradiction_rate, "percent"),
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
                    stated(f.for_win_rate, "percent"),
                    stated(f.accuracy, "percent"),
                    stated(f.agreement),
                )
            console.print(compared)
        method = {"cohen": " (Cohen's kappa)", "fleiss": " (Fleiss' kappa)"}.get(report.panel.method, "")
        console.print(
            f"Panel agreement{method}: {stated(report.panel.agreement)}. "
            f"Score correlation: {stated(report.panel.score_correlation)}.",
            highlight=False,
        )
