"""An arena's pages for a kind of batch (the pages themselves are audience/arena_views.py's, over an audience/arena.py
`Arena`): the random blind debate, one debate and its vote, and the owner's opt-in of the batch's finished debates.
A kind's urls.py lists them with `urlpatterns`: its arena, its template (given `seen` and the viewer's vote `mine`),
where they live and their names."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import URLPattern, path
from django.views.decorators.http import require_GET, require_POST

from audience import arena_views, poll_views
from audience.arena import Arena
from audience.votes import PollError
from batches.arena import not_blind, set_arena
from batches.models import BatchRecord
from chaoslm import sharing


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
        return arena_views.random_page(request, arena, template)

    @require_GET
    def arena_item(request: HttpRequest, item_id: int) -> HttpResponse:
        return arena_views.item_page(request, arena, template, item_id)

    @require_POST
    def arena_vote(request: HttpRequest, item_id: int) -> HttpResponse:
        return arena_views.vote(request, arena, item_id, item_name)

    @sharing.owner_action(model)
    def batch_arena(request: HttpRequest, batch: BatchRecord) -> HttpResponse:
        return opt_in(request, arena, batch, f"{name}_detail")

    return [
        path(f"{app}/<id:pk>/arena/", batch_arena, name=f"{name}_arena"),
        path(at, arena_page, name=page_name),
        path(f"{at}<id:item_id>/", arena_item, name=item_name),
        path(f"{at}<id:item_id>/vote/", arena_vote, name=vote_name),
    ]
