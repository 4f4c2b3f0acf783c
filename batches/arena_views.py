"""The pages every arena has (batches/arena.py): a random blind debate to vote on, one debate (who was who to a
viewer who voted on it, blind to anyone else), the vote (a plain form post) and the owner's opt-in. Open to
everyone, signed in or not; who votes is decided as in the Oxford poll (audience/poll_views.py: an account, or a
signed anonymous cookie, and the per-address limit). A kind's urls.py lists them with `urlpatterns`: its arena,
its template (given `seen` and the viewer's vote `mine`), where they live and their names."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.views.decorators.http import require_GET, require_POST

from audience import poll_views
from audience.votes import PollError
from batches.arena import Arena, not_blind, set_arena
from batches.models import BatchRecord
from chaoslm import sharing


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


def opt_in(request: HttpRequest, arena: Arena[Any], batch: BatchRecord, detail_url: str) -> HttpResponse:
    """The owner puts the batch's finished debates in its arena, or takes them out (the votes stay), told plainly
    when they are not blind (`not_blind`)."""
    choice = request.POST.get("arena", "")
    if choice not in ("on", "off"):
        return poll_views.refusal(PollError("Say on or off.", 400))
    set_arena(batch, choice == "on")
    messages.success(request, arena.opted_in if batch.arena else arena.opted_out)
    if batch.arena and (warning := not_blind(batch)):
        messages.warning(request, warning)
    return redirect(detail_url, batch.pk)


def urlpatterns(
    arena: Arena[Any],
    model: type[BatchRecord],
    *,
    at: str,
    template: str,
    names: tuple[str, str, str],
) -> list[URLPattern]:
    """The arena's pages under `at` (the random page, one debate's, its vote; `names` in that order) and the
    batch's opt-in at `<app>/<id>/arena/`, named `<model>_arena`."""
    app, name = model._meta.app_label, model._meta.model_name
    page_name, item_name, vote_name = names

    @require_GET
    def arena_page(request: HttpRequest) -> HttpResponse:
        return random_page(request, arena, template)

    @require_GET
    def arena_item(request: HttpRequest, item_id: int) -> HttpResponse:
        return item_page(request, arena, template, item_id)

    @require_POST
    def arena_vote(request: HttpRequest, item_id: int) -> HttpResponse:
        return vote(request, arena, item_id, item_name)

    @sharing.owner_action(model)
    def batch_arena(request: HttpRequest, batch: BatchRecord) -> HttpResponse:
        return opt_in(request, arena, batch, f"{name}_detail")

    return [
        path(f"{app}/<id:pk>/arena/", batch_arena, name=f"{name}_arena"),
        path(at, arena_page, name=page_name),
        path(f"{at}<id:item_id>/", arena_item, name=item_name),
        path(f"{at}<id:item_id>/vote/", arena_vote, name=vote_name),
    ]
