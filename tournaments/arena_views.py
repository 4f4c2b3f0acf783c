"""The arena's pages: a random blind match to vote on, the vote (a plain form post), and who was who once voted.
Open to everyone, signed in or not; who votes is decided as in the Oxford poll (debates/poll_views.py: an account,
or a signed anonymous cookie, and the per-address limit). The arena itself is tournaments/arena.py."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from chaoslm import sharing
from debates import poll_views
from debates.votes import PollError
from tournaments import arena
from tournaments.models import Tournament


@require_GET
def arena_page(request: HttpRequest) -> HttpResponse:
    """A random match this viewer has not voted on, blind; or a note that none is left."""
    match = arena.pick(poll_views.viewer(request))
    if match is None:
        return render(request, "tournaments/arena.html", {"seen": None, "any": arena.matches().exists()})
    return render(request, "tournaments/arena.html", {"seen": arena.seen(match), "mine": None})


@require_GET
def arena_match(request: HttpRequest, match_id: int) -> HttpResponse:
    """One match of the arena: who was who, to a viewer who voted on it; blind, to anyone else."""
    try:
        match = arena.in_arena(match_id)
    except PollError as error:
        return poll_views.refusal(error)
    mine = arena.vote_of(match, poll_views.viewer(request))
    return render(request, "tournaments/arena.html", {"seen": arena.seen(match), "mine": mine})


@require_POST
def arena_vote(request: HttpRequest, match_id: int) -> HttpResponse:
    if (limited := poll_views.over_limit(request)) is not None:
        return limited
    try:
        match = arena.in_arena(match_id)
        voter, new_cookie = poll_views.voter_to_vote(request)
        vote = arena.cast(match, voter, request.POST.get("choice", ""))
    except PollError as error:
        return poll_views.refusal(error)
    if vote.excluded:
        messages.info(request, "Your vote is kept, but a name may remain in this transcript, so it is not counted.")
    else:
        messages.success(request, "Your vote is counted.")
    return poll_views.remember_voter(request, redirect("arena_match", match.pk), new_cookie)


@sharing.owner_action(Tournament)
def tournament_arena(request: HttpRequest, tournament: Tournament) -> HttpResponse:
    """The owner puts the tournament's finished matches in the arena, or takes them out (the votes stay)."""
    choice = request.POST.get("arena", "")
    if choice not in ("on", "off"):
        return poll_views.refusal(PollError("Say on or off.", 400))
    Tournament.objects.filter(pk=tournament.pk).update(arena=choice == "on")
    if choice == "on":
        messages.success(request, "Its finished matches are in the arena; their votes will show in the report.")
    else:
        messages.success(request, "Its matches left the arena; the votes already cast stay in the report.")
    return redirect("tournament_detail", tournament.pk)
