from typing import Any

from rich.console import Console

from batches.command import BatchCommand, table
from batches.templatetags.batch_tags import number, stated
from experiments import design, exports, selectors, services, work
from experiments.charts import title
from experiments.models import Experiment
from experiments.spec import ExperimentSpec, read_spec


class Command(BatchCommand):
    kind = work.EXPERIMENT
    report_help = "print an experiment's accuracy, calibration, debaters and judges"
    read_spec = staticmethod(read_spec)
    as_json = staticmethod(exports.as_json)
    check_batch = staticmethod(services.check_experiment)
    create_batch = staticmethod(services.create_experiment)

    def size(self, spec: ExperimentSpec, checked: Any) -> str:
        runs = design.count(len(spec.questions), spec.protocols, len(spec.debaters), len(spec.judges))
        return f"{runs} runs ({len(spec.questions)} questions, {', '.join(spec.protocols)}, both answer orders)."

    def print_report(self, experiment: Experiment, console: Console) -> None:
        report = selectors.report(experiment)
        self.print_heading(experiment, console, "runs")
        protocols = table(
            "Judge accuracy by protocol", ("Protocol", "Runs", "Unparsed", "Accuracy", "95% interval", "Brier")
        )
        for p in report.protocols:
            a = p.accuracy
            protocols.add_row(
                title(p.protocol),
                str(p.runs),
                str(p.unparsed),
                stated(a, "percent"),
                f"{number(a.low)} to {number(a.high)}" if a.low is not None else stated(a),
                stated(p.brier),
            )
        console.print(protocols)
        for name, d in report.differences.items():
            interval = f" (95% interval {number(d.low)} to {number(d.high)})" if d.low is not None else ""
            console.print(f"Accuracy, {title(name)}: {stated(d)}{interval}", highlight=False)
        debaters = table(
            "Debaters", ("Debater", "Wins when correct", "Wins when incorrect", "Rating", "Quotes", "Verified")
        )
        for d in report.debaters:
            debaters.add_row(
                d.name,
                stated(d.win_rate_correct, "percent"),
                stated(d.win_rate_incorrect, "percent"),
                number(d.rating),
                str(d.quotes),
                stated(d.verified_rate, "percent"),
            )
        console.print(debaters)
        consulted = design.CONSULTANCY in experiment.protocols
        asks = ("Asks the consultant",) if consulted else ()
        judges = table(
            "Judges",
            ("Judge", "Runs", "Unparsed", "Flip rate (position bias)", *asks, *map(title, experiment.protocols)),
        )
        for j in report.judges:
            judges.add_row(
                j.name,
                str(j.runs),
                str(j.unparsed),
                stated(j.flip_rate, "percent"),
                *((stated(j.asked, "percent"),) if consulted else ()),
                *(stated(j.accuracy[p], "percent") for p in experiment.protocols),
            )
        console.print(judges)
