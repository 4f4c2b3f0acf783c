"""Tournament pages and owner actions. The same access rules as debates (chaoslm/sharing.py)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from chaoslm import sharing
from chaoslm.csvsafe import csv_text
from chaoslm.sharing import Visibility
from tournaments import broadcast, exports, services
from tournaments.forms import NewTournamentForm
from tournaments.models import Tournament


def tournament_list(request: HttpRequest) -> HttpResponse:
    visible = Q(visibility=Visibility.PUBLIC)
    mine = Tournament.objects.none()
    if request.user.is_authenticated:
        mine = Tournament.objects.filter(owner=request.user)
        visible &= ~Q(owner=request.user)
    page = Paginator(Tournament.objects.filter(visible), 20).get_page(request.GET.get("page"))
    return render(request, "tournaments/list.html", {"mine": mine[:50], "public_page": page})


@login_required
def new_tournament(request: HttpRequest) -> HttpResponse:
    form = NewTournamentForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            tournament = services.create_tournament(
                name=data["name"],
                debaters=[services.Contestant.of(p) for p in data["debaters"]],
                judges=[services.Contestant.of(p) for p in data["judges"]],
                questions=form.parsed_questions,
                options=form.options(),
                sides=data["sides"],
                repeats=data["repeats"],
                concurrency=data["concurrency"],
                owner=request.user,
                visibility=data["visibility"],
            )
        except services.TournamentError as error:
            form.add_error(None, str(error))
        else:
            services.start(tournament)
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
            "share": sharing.share_panel(request, tournament),
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


def _export(tournament: Tournament, name: str) -> HttpResponse:
    if name == "report.json":
        body = json.dumps(exports.as_json(tournament), indent=2)
        response = HttpResponse(body, content_type="application/json")
    elif name in ("matches.csv", "ratings.csv"):
        rows = exports.match_rows(tournament) if name == "matches.csv" else exports.rating_rows(tournament)
        response = HttpResponse(csv_text(rows), content_type="text/csv; charset=utf-8")
    else:
        return HttpResponse("No such export.", status=404)
    response["Content-Disposition"] = f'attachment; filename="tournament-{tournament.pk}-{name}"'
    return response


def tournament_export(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    return _export(sharing.visible_or_404(Tournament, request.user, pk=pk), name)


def tournament_share_export(request: HttpRequest, token: str, name: str) -> HttpResponse:
    return _export(sharing.visible_or_404(Tournament, request.user, token=token), name)


_owner_action = sharing.owner_action(Tournament)


@_owner_action
def tournament_pause(request: HttpRequest, tournament: Tournament) -> HttpResponse:
    services.pause(tournament)
    return redirect("tournament_detail", tournament.pk)


@_owner_action
def tournament_resume(request: HttpRequest, tournament: Tournament) -> HttpResponse:
    services.resume(tournament)
    return redirect("tournament_detail", tournament.pk)


@_owner_action
def tournament_cancel(request: HttpRequest, tournament: Tournament) -> HttpResponse:
    services.cancel(tournament)
    return redirect("tournament_detail", tournament.pk)


@login_required
@require_POST
def tournament_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """The owner (or staff) deletes a tournament and its debates; its run stops first."""
    tournament = sharing.visible_or_404(Tournament, request.user, pk=pk)
    if not sharing.can_delete(request.user, tournament):
        return HttpResponseForbidden("Only the tournament's owner can delete it.")
    services.delete(tournament)
    messages.success(request, "Tournament deleted, with its debates.")
    return redirect("tournament_list")


tournament_visibility = sharing.visibility_view(Tournament, services.set_visibility)
tournament_share_reset = sharing.share_reset_view(Tournament)
