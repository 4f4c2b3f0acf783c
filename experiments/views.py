"""Experiment pages and owner actions. The same access rules as debates and tournaments (chaoslm/sharing.py)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from batches import views as batch_views
from batches.panel import BatchError, Contestant
from chaoslm import sharing
from chaoslm.csvsafe import csv_text
from experiments import exports, selectors, services, work
from experiments.forms import NewExperimentForm
from experiments.models import Experiment, Run

RUNS_PER_PAGE = 50


experiment_list = batch_views.list_view(Experiment, "experiments/list.html")


@login_required
def new_experiment(request: HttpRequest) -> HttpResponse:
    form = NewExperimentForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            experiment = services.create_experiment(
                name=data["name"],
                questions=form.parsed_questions,
                protocols=data["protocols"],
                debaters=[Contestant.of(p) for p in data["debaters"]],
                judges=[Contestant.of(p) for p in data["judges"]],
                options=form.options(),
                concurrency=data["concurrency"],
                owner=request.user,
                visibility=data["visibility"],
            )
        except BatchError as error:
            form.add_error(None, str(error))
        else:
            work.EXPERIMENT.start(experiment)
            return redirect("experiment_detail", experiment.pk)
    return render(request, "experiments/new.html", {"form": form})


@login_required
@require_POST
def estimate(request: HttpRequest) -> HttpResponse:
    """The form's running estimate (htmx): how many debates and calls, and what is wrong with an uploaded file."""
    form = NewExperimentForm(request.POST, request.FILES or None)
    form.is_valid()
    file_errors = form.errors.get("questions_file") if request.FILES else None
    return render(request, "experiments/estimate.html", {"estimate": form.estimate(), "file_errors": file_errors})


def _page(request: HttpRequest, experiment: Experiment, common: dict[str, Any]) -> HttpResponse:
    judged = selectors.judged(experiment)
    runs = Run.objects.filter(experiment=experiment).select_related(
        "question", "judge", "first", "second", "debate", "source"
    )
    page = Paginator(runs.order_by("order"), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    by_run = {j.run: j for j in judged}
    for run in page:
        run.judged = by_run.get(run.pk)  # the runs table shows each judge's answer
    return render(
        request,
        "experiments/detail.html",
        {
            **common,
            "experiment": experiment,
            "progress": selectors.progress(experiment),
            **selectors.report_context(experiment, judged),
            "run_page": page,
            "questions": experiment.questions.count(),
            "participants": list(experiment.participants.all()),
        },
    )


experiment_detail, experiment_share = batch_views.page_views(Experiment, _page)


experiment_export, experiment_share_export = batch_views.export_views(
    Experiment,
    {
        "report.json": lambda experiment: json.dumps(exports.as_json(experiment), indent=2),
        "runs.csv": lambda experiment: csv_text(exports.run_rows(selectors.judged(experiment))),
        "protocols.csv": lambda experiment: csv_text(exports.protocol_rows(selectors.report(experiment))),
    },
)
experiment_pause = batch_views.owner_action_view(Experiment, work.EXPERIMENT.pause)
experiment_resume = batch_views.owner_action_view(Experiment, work.EXPERIMENT.resume)
experiment_cancel = batch_views.owner_action_view(Experiment, work.EXPERIMENT.cancel)
# The owner (or staff) deletes an experiment and its runs' debates; its run stops first.
experiment_delete = batch_views.delete_view(
    Experiment, work.EXPERIMENT.delete, "Experiment deleted, with its runs' debates."
)
# Staff manage any batch's sharing: one made on the command line may belong to nobody who could.
experiment_visibility = sharing.visibility_view(Experiment, work.EXPERIMENT.set_visibility, staff=True)
experiment_share_reset = sharing.share_reset_view(Experiment, staff=True)
