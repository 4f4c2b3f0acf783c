"""Tournament pages and owner actions. The same access rules as debates (chaoslm/sharing.py)."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from batches import views as batch_views
from batches.panel import BatchError, Contestant
from chaoslm import sharing
from chaoslm.csvsafe import csv_text
from tournaments import broadcast, exports, services
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


def _page(request: HttpRequest, tournament: Tournament, *, ws_url: str, exports_base: str) -> HttpResponse:
    state = broadcast.page_state(tournament)
    match_page, match_rows = broadcast.match_page(tournament, request.GET.get("page"))
    return render(
        request,
        "tournaments/detail.html",
        {
            **state,
            "match_page": match_page,
            "match_rows": match_rows,
            "is_owner": sharing.is_owner(request.user, tournament),
            "can_delete": sharing.can_delete(request.user, tournament),
            "ws_url": ws_url,
            "share": sharing.share_panel(request, tournament, staff=True),
            "exports_base": exports_base,
            "questions": tournament.questions.count(),
            "entrants": list(tournament.entrants.all()),
        },
    )


def tournament_detail(request: HttpRequest, pk: int) -> HttpResponse:
    tournament = sharing.visible_or_404(Tournament, request.user, pk=pk)
    return _page(
        request, tournament, ws_url=f"/ws/tournaments/{pk}/", exports_base=reverse("tournament_detail", args=[pk])
    )


def tournament_share(request: HttpRequest, token: str) -> HttpResponse:
    tournament = sharing.visible_or_404(Tournament, request.user, token=token)
    return _page(
        request,
        tournament,
        ws_url=f"/ws/tournament-share/{token}/",
        exports_base=reverse("tournament_share", args=[token]),
    )


tournament_export, tournament_share_export = batch_views.export_views(
    Tournament,
    {
        "report.json": lambda tournament: json.dumps(exports.as_json(tournament), indent=2),
        "matches.csv": lambda tournament: csv_text(exports.match_rows(tournament)),
        "ratings.csv": lambda tournament: csv_text(exports.rating_rows(tournament)),
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
