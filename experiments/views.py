"""An experiment's page and its export files; its other pages (the list, the form, the owner's actions, sharing) are
every batch's (batches/views.py). The same access rules as debates and tournaments (chaoslm/sharing.py)."""

from __future__ import annotations

import json
from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chaoslm.csvsafe import csv_text
from debates.selectors import batch_usage
from experiments import arena, exports, selectors
from experiments.models import Experiment, Run

RUNS_PER_PAGE = 50


def page(request: HttpRequest, experiment: Experiment, common: dict[str, Any]) -> HttpResponse:
    judged = selectors.judged(experiment)
    runs = Run.objects.filter(experiment=experiment).select_related(
        "question", "judge", "first", "second", "debate", "source"
    )
    run_page = Paginator(runs.order_by("order"), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    by_run = {j.run: j for j in judged}
    for run in run_page:
        run.judged = by_run.get(run.pk)  # the runs table shows each judge's answer
    return render(
        request,
        "experiments/detail.html",
        {
            **common,
            "experiment": experiment,
            "progress": selectors.progress(experiment),
            **selectors.report_context(experiment, judged),
            "human": arena.human_report(experiment, judged),
            "in_arena": arena.serves(experiment),
            "run_page": run_page,
            "questions": experiment.questions.count(),
            "participants": list(experiment.participants.all()),
            **batch_usage(selectors.debates_of(experiment)),
        },
    )


EXPORTS = {
    "report.json": lambda experiment: json.dumps(exports.as_json(experiment), indent=2),
    "runs.csv": lambda experiment: csv_text(exports.run_rows(selectors.judged(experiment))),
    "protocols.csv": lambda experiment: csv_text(exports.protocol_rows(selectors.report(experiment))),
    "human.csv": lambda experiment: csv_text(
        exports.human_rows(arena.human_report(experiment, selectors.judged(experiment)))
    ),
}
