from pathlib import Path
from typing import Any

from django.core.management.base import CommandError
from rich.console import Console
from rich.table import Table

from batches.command import BatchCommand
from batches.panel import BatchError
from batches.spec import SpecError
from batches.templatetags.batch_tags import figure, number
from experiments import design, exports, selectors, services, work
from experiments.charts import title
from experiments.models import Experiment
from experiments.spec import read_spec


class Command(BatchCommand):
    help = "Run an experiment from a YAML spec with a live progress bar, resume one, or print its report."
    kind = work.EXPERIMENT
    report_help = "print an experiment's accuracy, calibration, debaters and judges"

    def as_json(self, batch: Experiment) -> dict[str, Any]:
        return exports.as_json(batch)

    def create(self, path: Path, console: Console, owner: Any) -> Experiment:
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
                owner=owner,
                visibility=spec.visibility,
            )
        except (SpecError, BatchError) as error:
            raise CommandError(str(error)) from None

    def print_report(self, experiment: Experiment, console: Console) -> None:
        report = selectors.report(experiment)
        figures = work.EXPERIMENT.progress(experiment)
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
                title(p.protocol),
                str(p.runs),
                str(p.unparsed),
                figure(a, "percent"),
                f"{number(a.low)} to {number(a.high)}" if a.low is not None else figure(a),
                figure(p.brier),
            )
        console.print(table)
        for name, d in report.differences.items():
            interval = f" (95% interval {number(d.low)} to {number(d.high)})" if d.low is not None else ""
            console.print(f"Accuracy, {title(name)}: {figure(d)}{interval}", highlight=False)
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
        consulted = design.CONSULTANCY in experiment.protocols
        asks = ("Asks the consultant",) if consulted else ()
        for column in (
            "Judge",
            "Runs",
            "Unparsed",
            "Flip rate (position bias)",
            *asks,
            *map(title, experiment.protocols),
        ):
            judges.add_column(column)
        for j in report.judges:
            judges.add_row(
                j.name,
                str(j.runs),
                str(j.unparsed),
                figure(j.flip_rate, "percent"),
                *((figure(j.asked, "percent"),) if consulted else ()),
                *(figure(j.accuracy[p], "percent") for p in experiment.protocols),
            )
        console.print(judges)
