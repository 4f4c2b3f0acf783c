"""A tournament's page and its export files; its other pages (the list, the form, the owner's actions, sharing) are
every batch's (batches/views.py). The same access rules as debates (chaoslm/sharing.py)."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chaoslm.csvsafe import csv_text
from tournaments import arena, broadcast, exports
from tournaments.models import Tournament


def page(request: HttpRequest, tournament: Tournament, common: dict[str, Any]) -> HttpResponse:
    match_page, match_rows = broadcast.match_page(tournament, request.GET.get("page"))
    return render(
        request,
        "tournaments/detail.html",
        {
            **broadcast.page_state(tournament),
            **common,
            "match_page": match_page,
            "match_rows": match_rows,
            "questions": tournament.questions.count(),
            "entrants": list(tournament.entrants.all()),
            "human": arena.human_report(tournament),
            "arena_note": arena.left_out(tournament),
        },
    )


EXPORTS = {
    "report.json": lambda tournament: json.dumps(exports.as_json(tournament), indent=2),
    "matches.csv": lambda tournament: csv_text(exports.match_rows(tournament)),
    "ratings.csv": lambda tournament: csv_text(exports.rating_rows(tournament)),
    "human_ratings.csv": lambda tournament: csv_text(exports.human_rating_rows(tournament)),
    "human_judges.csv": lambda tournament: csv_text(exports.human_judge_rows(tournament)),
}
