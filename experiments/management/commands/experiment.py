import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from experiments import design, exports, selectors, services, work
from experiments.models import Experiment
from experiments.spec import read_spec
from tournaments.spec import SpecError
from tournaments.templatetags.tournament_tags import figure, number


class Command(BaseCommand):
    help = "Run an experiment from a YAML spec with a live progress bar, resume one, or print its report."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help="create an experiment from SPEC.yaml and run it")
        run.add_argument("spec", type=Path)
        run.add_argument("--json", action="store_true", help="print the final report as JSON")
        run.add_argument("--enqueue", action="store_true", help="start it on the runner, print its id and return")
        resume = sub.add_parser("resume", help="go on with a stopped, paused or crashed experiment")
        resume.add_argument("id", type=int)
        resume.add_argument("--json", action="store_true")
        resume.add_argument("--enqueue", action="store_true")
        resume.add_argument(
            "--stalled-after",
            type=float,
            default=0.0,
            help="restart its debates in flight that made no progress for this many seconds "
            "(default 0: all of them, as after a crash)",
        )
        report = sub.add_parser("report", help="print an experiment's accuracy, calibration, debaters and judges")
        report.add_argument("id", type=int)
        report.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        # With --json, stdout carries the JSON alone; the size and the progress bar go to stderr.
        console = Console(file=(self.stderr if options.get("json") else self.stdout)._out)
        action = options["action"]
        if action == "run":
            experiment = self._create(options["spec"], console)
            work.start(experiment)
        else:
            experiment = Experiment.objects.filter(pk=options["id"]).first()
            if experiment is None:
                raise CommandError(f"there is no experiment {options['id']}")
            if action == "resume":
                work.resume(experiment, stalled_after=options["stalled_after"])
        if action in ("run", "resume"):
            if options["enqueue"]:
                self.stdout.write(str(experiment.pk))
                return
            self._watch(experiment, console)
        experiment.refresh_from_db()
        if options["json"]:
            self.stdout.write(json.dumps(exports.as_json(experiment), indent=2))
        else:
            self._print_report(experiment, console)

    def _create(self, path: Path, console: Console) -> Experiment:
        try:
            spec = read_spec(path)
            size = design.count(len(spec.questions), spec.protocols, len(spec.debaters), len(spec.judges))
            console.print(
                f"[bold]{spec.name}[/]: {size} runs ({len(spec.questions)} questions, "
                f"{', '.join(spec.protocols)}, both answer orders)",
                highlight=False,
            )
            return services.create_experiment(
                name=spec.name,
                questions=spec.questions,
                protocols=spec.protocols,
                debaters=spec.debaters,
                judges=spec.judges,
                options=spec.options,
                concurrency=spec.concurrency,
                visibility=spec.visibility,
            )
        except (SpecError, services.ExperimentError) as error:
            raise CommandError(str(error)) from None

    def _watch(self, experiment: Experiment, console: Console) -> None:
        """The live progress bar, until the experiment settles (Ctrl-C leaves it resumable)."""
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
        )
        try:
            with Progress(*columns, console=console, transient=False) as bar:
                task = bar.add_task(experiment.name, total=None, detail="")
                while True:
                    experiment.refresh_from_db()
                    figures = selectors.progress(experiment)
                    detail = f"{figures.running} running · {figures.failed} failed"
                    if figures.eta_text:
                        detail += f" · {figures.eta_text}"
                    bar.update(task, total=figures.total, completed=figures.done + figures.failed, detail=detail)
                    if work.is_settled(experiment.pk):
                        break
                    time.sleep(0.3)
        except KeyboardInterrupt:
            raise CommandError(
                f"stopped; the experiment goes on with `manage.py experiment resume {experiment.pk}`"
            ) from None

    def _print_report(self, experiment: Experiment, console: Console) -> None:
        report = selectors.report(experiment)
        figures = selectors.progress(experiment)
        console.print(
            f"[bold]{experiment.name}[/] (#{experiment.pk}): {experiment.get_status_display()}, "
            f"{figures.done} of {figures.total} runs done, {figures.failed} failed.",
            highlight=False,
        )
        table = Table(title="Judge accuracy by protocol")
        for column in ("Protocol", "Runs", "Unparsed", "Accuracy", "95% interval", "Brier"):
            table.add_column(column)
        for p in report.protocols:
            a = p.accuracy
            table.add_row(
                p.protocol,
                str(p.runs),
                str(p.unparsed),
                figure(a, "percent"),
                f"{number(a.low)} to {number(a.high)}" if a.low is not None else figure(a),
                figure(p.brier),
            )
        console.print(table)
        for name, d in report.differences.items():
            interval = f" (95% interval {number(d.low)} to {number(d.high)})" if d.low is not None else ""
            console.print(f"Accuracy {name}: {figure(d)}{interval}", highlight=False)
        debaters = Table(title="Debaters")
        for column in ("Debater", "Wins when correct", "Wins when incorrect", "Rating", "Quotes", "Verified"):
            debaters.add_column(column)
        for d in report.debaters:
            debaters.add_row(
                d.name,
                figure(d.win_rate_correct, "percent"),
                figure(d.win_rate_incorrect, "percent"),
                number(d.rating),
                str(d.quotes),
                figure(d.verified_rate, "percent"),
            )
        console.print(debaters)
        judges = Table(title="Judges")
        for column in ("Judge", "Runs", "Unparsed", "Flip rate (position bias)", *experiment.protocols):
            judges.add_column(column)
        for j in report.judges:
            judges.add_row(
                j.name,
                str(j.runs),
                str(j.unparsed),
                figure(j.flip_rate, "percent"),
                *(figure(j.accuracy[p], "percent") for p in experiment.protocols),
            )
        console.print(judges)
