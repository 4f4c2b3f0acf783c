"""CSV and JSON exports of a comparison: its runs as graded and its report (the page's links, the CLI's --json, the
API's report). CSV cells a spreadsheet would read as a formula are escaped (chaoslm/csvsafe.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from chaoslm.charts import NO_FIGURE
from comparisons import charts, selectors
from comparisons.models import Comparison
from debates.selectors import usage_json

if TYPE_CHECKING:
    from comparisons.compare_stats import Report

RUN_COLUMNS = [
    "run",
    "question",
    "arm",
    "gold",
    "answer",
    "correct",
    "calls",
    "tokens",
    "cost",
    "wall_s",
    "rounds_run",
    "rounds_cap",
    "first_answers",
    "final_answers",
    "debate",
]
ARM_COLUMNS = [
    "arm",
    "questions",
    "correct",
    "unanswered",
    "accuracy",
    "ci_low",
    "ci_high",
    "calls_per_question",
    "tokens_per_question",
    "cost_per_question",
    "wall_s_per_question",
    "cost_per_correct",
    "rounds_saved",
    "right_to_wrong",
    "wrong_to_right",
]
PAIR_COLUMNS = ["arm_a", "arm_b", "questions", "both_right", "b", "c", "both_wrong", "difference", "p_value"]


def _value(figure: Any) -> Any:
    if figure is None:
        return ""
    value = figure.value
    return NO_FIGURE if value is None else value


def run_rows(runs: list[selectors.Finished]) -> list[list[Any]]:
    rows: list[list[Any]] = [RUN_COLUMNS]
    for f in runs:
        s = f.stats
        rows.append(
            [
                f.order,
                f.question,
                f.arm,
                f.gold,
                "" if f.decided is None else f.decided,
                int(s.correct),
                s.calls,
                s.tokens,
                "unknown" if s.cost is None else s.cost,
                round(s.wall_s, 3),
                "" if s.rounds_run is None else s.rounds_run,
                "" if s.rounds_cap is None else s.rounds_cap,
                " ".join(a.key or "-" for a in s.first_answers),
                " ".join(a.key or "-" for a in s.final_answers),
                f.debate,
            ]
        )
    return rows


def arm_rows(report: Report) -> list[list[Any]]:
    rows: list[list[Any]] = [ARM_COLUMNS]
    for a in report.arms:
        rows.append(
            [
                a.arm,
                a.questions,
                a.correct,
                a.unanswered,
                _value(a.accuracy),
                "" if a.accuracy.low is None else a.accuracy.low,
                "" if a.accuracy.high is None else a.accuracy.high,
                _value(a.calls.per_question),
                _value(a.tokens.per_question),
                _value(a.cost.per_question),
                _value(a.wall_s.per_question),
                _value(a.cost.per_correct),
                "" if a.rounds is None else a.rounds.saved,
                "" if a.agreement is None else a.agreement.right_to_wrong,
                "" if a.agreement is None else a.agreement.wrong_to_right,
            ]
        )
    return rows


def pair_rows(report: Report) -> list[list[Any]]:
    rows: list[list[Any]] = [PAIR_COLUMNS]
    for p in report.pairs:
        rows.append(
            [
                p.arm_a,
                p.arm_b,
                p.questions,
                p.both_right,
                p.b,
                p.c,
                p.both_wrong,
                _value(p.difference),
                _value(p.p_value),
            ]
        )
    return rows


def as_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison, its progress, its report (every undefined figure null, with why), the chart's points, its
    runs and its cost."""
    from comparisons.compare_stats import accuracy_against_spend

    runs = selectors.finished(comparison)
    report = selectors.report(comparison, runs)
    progress = selectors.progress(comparison)
    return {
        "comparison": {
            "id": comparison.pk,
            "name": comparison.name,
            "status": comparison.status,
            "concurrency": comparison.concurrency,
            "questions": comparison.questions.count(),
            "arms": [
                {"name": a["name"], "format": a["format"], "options": a["options"], "seats": sorted(a["seats"])}
                for a in comparison.arms
            ],
        },
        "progress": {
            "total": progress.total,
            "done": progress.done,
            "running": progress.running,
            "failed": progress.failed,
        },
        "report": report.as_dict(),
        "chart": accuracy_against_spend(report, charts.measure(report)).as_dict(),
        "runs": [dict(zip(RUN_COLUMNS, row, strict=True)) for row in run_rows(runs)[1:]],
        "cost": usage_json(selectors.debates_of(comparison)),
    }


def report_json(comparison: Comparison) -> str:
    return json.dumps(as_json(comparison), indent=2)
