from rich.console import Console

from batches.command import BatchCommand, table
from batches.templatetags.batch_tags import NO_FIGURE, number, stated
from comparisons import exports, kind, selectors, services
from comparisons.models import Comparison
from comparisons.spec import ComparisonSpec, read_spec


class Command(BatchCommand):
    kind = kind.COMPARISON
    report_help = "print a comparison's accuracy per arm, its pairs of arms, what each spent and its rounds"
    read_spec = staticmethod(read_spec)
    as_json = staticmethod(exports.as_json)
    check_batch = staticmethod(services.check_comparison)
    create_batch = staticmethod(services.create_comparison)

    def size(self, spec: ComparisonSpec, checked: services.Checked) -> str:
        # The checks' own arms and size: resolved for the owner, so their private cards count as any other.
        made = checked.size
        names = ", ".join(a.name for a in checked.arms)
        return f"{made.runs} runs ({len(spec.questions)} questions \u00d7 {names}), {made.calls_text} model calls."

    def print_report(self, comparison: Comparison, console: Console) -> None:
        report = selectors.report(comparison)
        self.print_heading(comparison, console, "runs")
        arms = table(
            "Accuracy by arm",
            (
                "Arm",
                "Questions",
                "Correct",
                "Accuracy",
                "95% interval (Wilson)",
                "Calls/question",
                "Cost/correct",
                "Rounds saved",
            ),
        )
        for a in report.arms:
            s = a.accuracy
            arms.add_row(
                a.arm,
                str(a.questions),
                str(a.correct),
                stated(s, "percent"),
                f"{number(s.low)} to {number(s.high)}" if s.low is not None else NO_FIGURE,
                stated(a.calls.per_question),
                "unknown price" if a.unpriced else stated(a.cost.per_correct),
                "" if a.rounds is None else str(a.rounds.saved),
            )
        console.print(arms)
        unpriced = [f"{a.arm}, {a.unpriced} of {a.questions}" for a in report.arms if a.unpriced]
        if unpriced:
            why = "An arm's cost is unknown when any of its runs made a call at an unknown price"
            console.print(f"{why}: {'; '.join(unpriced)}.", highlight=False)
        pairs = table("Pairs of arms (exact McNemar)", ("Arms", "Questions", "b", "c", "Difference", "p"))
        for p in report.pairs:
            pairs.add_row(
                f"{p.arm_a} vs {p.arm_b}", str(p.questions), str(p.b), str(p.c), stated(p.difference), stated(p.p_value)
            )
        console.print(pairs)
