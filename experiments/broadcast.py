"""Rendering an experiment's live parts (the progress bar and the report), pushed to its page as its runs finish."""

from __future__ import annotations

from django.template.loader import render_to_string

from batches.progress import ReportThrottle
from chaoslm import live
from experiments import selectors
from experiments.models import Experiment

PROGRESS = "partials/experiment_progress.html"
REPORT = "partials/experiment_report.html"
# On Celery a push follows every finished debate, and the report reads every judged run: the progress bar moves each
# time, the figures every two seconds.
_reports = ReportThrottle(every=2.0)


def group(experiment_id: int) -> str:
    return f"experiment-{experiment_id}"


def live_html(experiment: Experiment, *, with_report: bool = True) -> str:
    """The progress bar and (`with_report`) the report's figures, as they stand; the runs table stays as the page
    drew it."""
    context = {"experiment": experiment, "progress": selectors.progress(experiment), "oob": True}
    html = render_to_string(PROGRESS, context)
    if with_report:
        html += render_to_string(REPORT, {**context, **selectors.report_context(experiment)})
    return html


def live_html_of(experiment_id: int) -> str:
    """The experiment's live parts to push; nothing (and nothing drawn) while no page shows it."""
    if not live.has_audience(group(experiment_id)):
        return ""
    experiment = Experiment.objects.filter(pk=experiment_id).first()
    if experiment is None:
        return ""
    running = experiment.status == Experiment.Status.RUNNING
    return live_html(experiment, with_report=_reports.due(experiment_id, running=running))
