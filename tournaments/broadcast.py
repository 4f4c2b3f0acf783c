"""Rendering a tournament's visual units, and pushing them to its page as its debates finish.

The same partials draw the page and every push (hx-swap-oob, replacing the element with the same id):
the progress bar, the leaderboard with its forest plot, the head-to-head matrix, the judges' table and
the calls and tokens per persona. A push carries everything, so a page that missed one is whole again
at the next.

The matches table is too long for that (and paged): a socket gets its page's rows when it joins, then
every push carries the rows whose debates changed lately (`ROWS_WINDOW`), each replacing the row with
the same id on the pages that show it (the `replace` swap, static/js/chaoslm.js).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db.models import Q
from django.template.loader import render_to_string
from django.utils import timezone

from chaoslm import live
from debates.selectors import batch_usage
from tournaments import charts, results, state
from tournaments.models import Match, Tournament

PARTIALS = (
    "partials/tournament_progress.html",
    "partials/tournament_leaderboard.html",
    "partials/tournament_matrix.html",
    "partials/tournament_judges.html",
    "partials/tournament_formats.html",
    "partials/batch_usage.html",
)


MATCHES_PER_PAGE = 50
ROW = "partials/tournament_match.html"


def rows_window() -> timedelta:
    """How long after its debate (or a judgment's) changed a match's row goes out with every push. Passes
    push at least once a tick, so this reaches each page even when a pass or two runs late."""
    return timedelta(seconds=max(10.0, 3 * settings.CHAOSLM_BATCH_TICK))


def match_page(tournament: Tournament, number: Any) -> tuple[Page, list[dict[str, Any]]]:
    """Page `number` of the matches table (the first if it is not a page) and its rows."""
    ids = Match.objects.filter(tournament=tournament).order_by("order").values_list("pk", flat=True)
    page = Paginator(ids, MATCHES_PER_PAGE).get_page(number)
    return page, results.matches(tournament, list(page))


def rows_html(rows: list[dict[str, Any]], tournament: Tournament) -> str:
    """Rows for the `replace` swap: each replaces the row with its id where a page shows it. In a <template>,
    where the parser keeps table rows standing alone."""
    if not rows:
        return ""
    html = "".join(render_to_string(ROW, {"m": m, "tournament": tournament}) for m in rows)
    return f'<div hx-swap-oob="replace:#match-pushes"><template>{html}</template></div>'


def changed_rows(tournament: Tournament) -> list[dict[str, Any]]:
    since = timezone.now() - rows_window()
    ids = (
        Match.objects.filter(tournament=tournament)
        .filter(Q(debate__updated_at__gte=since) | Q(judgments__debate__updated_at__gte=since))
        .values_list("pk", flat=True)
        .distinct()
    )
    return results.matches(tournament, list(ids))


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
        **batch_usage(results.debates_of(tournament)),
    }


def live_html(tournament: Tournament, *, page: Any = None) -> str:
    """The live parts, with the rows changed lately; or, for a socket joining, the rows of its `page`."""
    context = {**page_state(tournament, live=True), "oob": True}
    rows = match_page(tournament, page)[1] if page is not None else changed_rows(tournament)
    return "".join(render_to_string(template, context) for template in PARTIALS) + rows_html(rows, tournament)


def live_html_of(tournament_id: int) -> str:
    """The tournament's live parts to push; nothing (and nothing drawn) while no page shows it."""
    if not live.has_audience(live.tournament_group(tournament_id)):
        return ""
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    return live_html(tournament) if tournament is not None else ""


def push(tournament_id: int) -> None:
    """Send the tournament's live parts, as they stand, to every page showing it (from synchronous code)."""
    live.push_sync(live.tournament_group(tournament_id), live_html_of(tournament_id))
