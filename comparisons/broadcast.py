"""Rendering a comparison's live parts (the progress bar, the report, the cost panel and the runs' rows), pushed to
its page as its runs finish."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import mark_safe

from batches.progress import ReportThrottle
from chaoslm import live
from comparisons import charts, selectors
from comparisons.models import Comparison, Run
from debates.selectors import batch_usage

PROGRESS = "comparisons/progress.html"
REPORT = "comparisons/report.html"
USAGE = "partials/batch_usage.html"
ROW = "comparisons/run_row.html"
# The progress bar moves at every push, the report every two seconds.
_reports = ReportThrottle(every=2.0)


def group(comparison_id: int) -> str:
    return f"comparison-{comparison_id}"


def report_context(comparison: Comparison, runs: list[selectors.Finished] | None = None) -> dict[str, Any]:
    report = selectors.report(comparison, runs)
    # The arms whose cost is unknown, said once under the table rather than in each of their cells.
    unpriced = [a for a in report.arms if a.unpriced]
    # charts.svg escapes every text it draws (the arms' names).
    return {"report": report, "chart": mark_safe(charts.svg(report)), "unpriced": unpriced}  # noqa: S308


def rows_window() -> timedelta:
    """How long after its debate changed a run's row goes out with the report's pushes: a report is drawn at least
    every `_reports.every` seconds while the comparison runs, and the passes that push it may run a tick or two late."""
    return timedelta(seconds=max(10.0, 3 * settings.CHAOSLM_BATCH_TICK, 3 * _reports.every))


def rows_html(comparison: Comparison, done: list[selectors.Finished]) -> str:
    """The rows of the runs whose debates changed lately, for the `replace` swap: each replaces the row of its id
    where a page shows it (a page of other runs shows none of them). In a <template>, where the parser keeps table
    rows standing alone."""
    since = timezone.now() - rows_window()
    runs = Run.objects.filter(comparison=comparison, debate__updated_at__gte=since).select_related("question", "debate")
    rows = selectors.run_rows(comparison, runs.order_by("order"), done)
    if not rows:
        return ""
    html = "".join(render_to_string(ROW, {"r": r}) for r in rows)
    return f'<div hx-swap-oob="replace:#run-pushes"><template>{html}</template></div>'


def live_html(comparison: Comparison, *, with_report: bool = True) -> str:
    """The progress bar; with the report, what else a run's end changes: the cost panel and the runs' rows."""
    context: dict[str, Any] = {"comparison": comparison, "progress": selectors.progress(comparison), "oob": True}
    html = render_to_string(PROGRESS, context)
    if with_report:
        done = selectors.finished(comparison)
        html += render_to_string(REPORT, {**context, **report_context(comparison, done)})
        html += render_to_string(USAGE, {"oob": True, **batch_usage(selectors.debates_of(comparison))})
        html += rows_html(comparison, done)
    return html


def live_html_of(comparison_id: int) -> str:
    """The comparison's live parts to push; nothing (and nothing drawn) while no page shows it."""
    if not live.has_audience(group(comparison_id)):
        return ""
    comparison = Comparison.objects.filter(pk=comparison_id).first()
    if comparison is None:
        return ""
    running = comparison.status == Comparison.Status.RUNNING
    return live_html(comparison, with_report=_reports.due(comparison_id, running=running))
