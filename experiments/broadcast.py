"""Rendering an experiment's live parts (the progress bar and the report), pushed to its page as its runs finish."""

from __future__ import annotations

from django.template.loader import render_to_string

from chaoslm import live
from experiments import selectors
from experiments.models import Experiment

PROGRESS = "partials/experiment_progress.html"
REPORT = "partials/experiment_report.html"


def group(experiment_id: int) -> str:
    return f"experiment-{experiment_id}"


def live_html(experiment: Experiment) -> str:
    """The progress bar and the report's figures, as they stand (the runs table stays as the page drew it)."""
    context = {"experiment": experiment, "progress": selectors.progress(experiment), "oob": True}
    return render_to_string(PROGRESS, context) + render_to_string(
        REPORT, {**context, **selectors.report_context(experiment)}
    )


def live_html_of(experiment_id: int) -> str:
    """The experiment's live parts to push; nothing (and nothing drawn) while no page shows it."""
    if not live.has_audience(group(experiment_id)):
        return ""
    experiment = Experiment.objects.filter(pk=experiment_id).first()
    return live_html(experiment) if experiment is not None else ""
