"""The pages every arena has (audience/arena.py): a random blind debate to vote on, one debate (who was who to a
viewer who voted on it, blind to anyone else) and the vote (a plain form post). Open to everyone, signed in or not;
who votes is decided as in the Oxford poll (audience/poll_views.py: an account, or a signed anonymous cookie, and
the per-address limit). batches/arena_views.py lists them, with a batch's opt-in, for each kind's urls.py."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from audience import poll_views
from audience.arena import Arena
from audience.votes import PollError


def random_page(request: HttpRequest, arena: Arena[Any], template: str) -> HttpResponse:
    """A random debate this viewer has not voted on, blind; or a note that none is left (`any`: whether the arena
    has any debate at all)."""
    item = arena.pick(poll_views.viewer(request))
    if item is None:
        return render(request, template, {"seen": None, "any": arena.items().exists()})
    return render(request, template, {"seen": arena.seen(item), "mine": None, "ballot": poll_views.new_ballot()})


def item_page(request: HttpRequest, arena: Arena[Any], template: str, item_id: int) -> HttpResponse:
    try:
        item = arena.in_arena(item_id)
    except PollError as error:
        return poll_views.refusal(error)
    mine = arena.vote_of(item, poll_views.viewer(request))
    ballot = poll_views.new_ballot()
    return render(request, template, {"seen": arena.seen(item), "mine": mine, "ballot": ballot})


def vote(request: HttpRequest, arena: Arena[Any], item_id: int, item_url: str) -> HttpResponse:
    """Count the vote and go to the item's page, which now reveals who was who; refused with nothing counted when
    the address is past its limit (429), the item is not in the arena (404), the choice or the cookie is bad (400),
    or the voter voted on it already and now says otherwise (409: the reveal made the vote final)."""
    if (limited := poll_views.over_limit(request)) is not None:
        return limited
    try:
        item = arena.in_arena(item_id)
        voter, new_cookie = poll_views.voter_to_vote(request)
        cast = arena.cast(item, voter, request.POST.get("choice", ""))
    except PollError as error:
        return poll_views.refusal(error)
    if cast.excluded:
        messages.info(
            request, f"Your {arena.vote_noun} is kept, but a name may remain in this transcript, so it is not counted."
        )
    else:
        messages.success(request, f"Your {arena.vote_noun} is counted.")
    return poll_views.remember_voter(request, redirect(item_url, item.pk), new_cookie)
