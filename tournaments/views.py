"""Tournament pages and owner actions. The same access rules as debates (chaoslm/sharing.py)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from batches import views as batch_views
from batches.panel import BatchError, Contestant
from chaoslm import sharing
from chaoslm.csvsafe import csv_text
from tournaments import arena, broadcast, exports, services
from tournaments.forms import NewTournamentForm
from tournaments.models import Tournament

tournament_list = batch_views.list_view(Tournament, "tournaments/list.html")


@login_required
def new_tournament(request: HttpRequest) -> HttpResponse:
    form = NewTournamentForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            tournament = services.create_tournament(
                name=data["name"],
                debaters=[Contestant.of(p) for p in data["debaters"]],
                judges=[Contestant.of(p) for p in data["judges"]],
                questions=form.parsed_questions,
                options=form.options(),
                sides=data["sides"],
                repeats=data["repeats"],
                concurrency=data["concurrency"],
                owner=request.user,
                visibility=data["visibility"],
                formats=data["formats"],
                moderator=Contestant.of(data["moderator"]) if data["moderator"] else None,
                arena=data["arena"],
            )
        except BatchError as error:
            form.add_error(None, str(error))
        else:
            services.TOURNAMENT.start(tournament)
            return redirect("tournament_detail", tournament.pk)
    return render(request, "tournaments/new.html", {"form": form})


@login_required
@require_POST
def estimate(request: HttpRequest) -> HttpResponse:
    """The form's running estimate (htmx): how many debates and calls, or what is still wrong."""
    form = NewTournamentForm(request.POST, request.FILES or None)
    form.is_valid()
    return render(request, "tournaments/estimate.html", {"form": form, "estimate": form.estimate()})


def _page(request: HttpRequest, tournament: Tournament, common: dict[str, Any]) -> HttpResponse:
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
        },
    )


tournament_detail, tournament_share = batch_views.page_views(Tournament, _page)
tournament_export, tournament_share_export = batch_views.export_views(
    Tournament,
    {
        "report.json": lambda tournament: json.dumps(exports.as_json(tournament), indent=2),
        "matches.csv": lambda tournament: csv_text(exports.match_rows(tournament)),
        "ratings.csv": lambda tournament: csv_text(exports.rating_rows(tournament)),
        "human_ratings.csv": lambda tournament: csv_text(exports.human_rating_rows(tournament)),
        "human_judges.csv": lambda tournament: csv_text(exports.human_judge_rows(tournament)),
    },
)
tournament_pause = batch_views.owner_action_view(Tournament, services.TOURNAMENT.pause)
tournament_resume = batch_views.owner_action_view(Tournament, services.TOURNAMENT.resume)
tournament_cancel = batch_views.owner_action_view(Tournament, services.TOURNAMENT.cancel)
# The owner (or staff) deletes a tournament and its debates; its run stops first.
tournament_delete = batch_views.delete_view(
    Tournament, services.TOURNAMENT.delete, "Tournament deleted, with its debates."
)
# Staff manage any batch's sharing: one made on the command line may belong to nobody who could.
tournament_visibility = sharing.visibility_view(Tournament, services.TOURNAMENT.set_visibility, staff=True)
tournament_share_reset = sharing.share_reset_view(Tournament, staff=True)
