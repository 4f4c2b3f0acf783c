"""A comparison's page and its export files; its other pages (the list, the form, the owner's actions, sharing) are
every batch's (batches/views.py), with the same access rules (chaoslm/sharing.py)."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chaoslm.csvsafe import csv_text
from comparisons import broadcast, exports, selectors
from comparisons.models import Comparison, Run
from debates.selectors import batch_usage

RUNS_PER_PAGE = 50


def page(request: HttpRequest, comparison: Comparison, common: dict[str, Any]) -> HttpResponse:
    done = selectors.finished(comparison)
    runs = Run.objects.filter(comparison=comparison).select_related("question", "debate")
    run_page = Paginator(runs.order_by("order"), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "comparisons/detail.html",
        {
            **common,
            "comparison": comparison,
            "progress": selectors.progress(comparison),
            **broadcast.report_context(comparison, done),
            "run_page": run_page,
            "run_rows": selectors.run_rows(comparison, run_page, done),
            "questions": comparison.questions.count(),
            **batch_usage(selectors.debates_of(comparison)),
        },
    )


EXPORTS = {
    "report.json": exports.report_json,
    "runs.csv": lambda comparison: csv_text(exports.run_rows(selectors.finished(comparison))),
    "arms.csv": lambda comparison: csv_text(exports.arm_rows(selectors.report(comparison))),
    "pairs.csv": lambda comparison: csv_text(exports.pair_rows(selectors.report(comparison))),
}
