"""The arena's pages (every arena's, batches/arena_views.py) over the tournaments' matches (tournaments/arena.py),
and the owner's opt-in."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET, require_POST

from batches import arena_views
from chaoslm import sharing
from tournaments.arena import ARENA
from tournaments.models import Tournament

TEMPLATE = "tournaments/arena.html"


@require_GET
def arena_page(request: HttpRequest) -> HttpResponse:
    return arena_views.random_page(request, ARENA, TEMPLATE)


@require_GET
def arena_match(request: HttpRequest, match_id: int) -> HttpResponse:
    return arena_views.item_page(request, ARENA, TEMPLATE, match_id)


@require_POST
def arena_vote(request: HttpRequest, match_id: int) -> HttpResponse:
    return arena_views.vote(request, ARENA, match_id, "arena_match")


@sharing.owner_action(Tournament)
def tournament_arena(request: HttpRequest, tournament: Tournament) -> HttpResponse:
    return arena_views.opt_in(
        request,
        tournament,
        "tournament_detail",
        on="Its finished matches are in the arena; their votes will show in the report.",
        off="Its matches left the arena; the votes already cast stay in the report.",
    )
