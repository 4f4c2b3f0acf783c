"""Rendering a tournament's visual units, and pushing them to its page as its debates finish.

The same partials draw the page and every push (hx-swap-oob, replacing the element with the same id):
the progress bar, the leaderboard with its forest plot, the head-to-head matrix, the judges' table and
the calls and tokens per persona. A push carries everything, so a page that missed one is whole again
at the next.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.template.loader import render_to_string

from chaoslm import live
from tournaments import charts, results, state
from tournaments.models import Tournament

PARTIALS = (
    "partials/tournament_progress.html",
    "partials/tournament_leaderboard.html",
    "partials/tournament_matrix.html",
    "partials/tournament_judges.html",
    "partials/tournament_usage.html",
)


def page_state(tournament: Tournament, *, live: bool = False) -> dict[str, Any]:
    """What the page draws; `live` (a push) may reuse a report a few seconds old while the tournament runs."""
    running = live and tournament.status == Tournament.Status.RUNNING
    report = results.report(tournament, max_age=settings.CHAOSLM_TOURNAMENT_REPORT_EVERY if running else 0)
    debaters, _ = results.entrant_names(tournament)
    return {
        "tournament": tournament,
        "progress": state.progress(tournament),
        "report": report,
        "forest": charts.forest(report.ratings),
        "matrix": charts.matrix(debaters, report.head_to_head),
        "usage": results.usage(tournament),
    }


def live_html(tournament: Tournament) -> str:
    context = {**page_state(tournament, live=True), "oob": True}
    return "".join(render_to_string(template, context) for template in PARTIALS)


def live_html_of(tournament_id: int) -> str:
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    return live_html(tournament) if tournament is not None else ""


def push(tournament_id: int) -> None:
    """Send the tournament's live parts, as they stand, to every page showing it (from synchronous code)."""
    live.push_sync(live.tournament_group(tournament_id), live_html_of(tournament_id))
