"""The evidence arena's pages (every arena's, batches/arena_views.py) over the experiments' evidence debates
(experiments/arena.py), and the owner's opt-in."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET, require_POST

from batches import arena_views
from chaoslm import sharing
from experiments.arena import ARENA
from experiments.models import Experiment

TEMPLATE = "experiments/arena.html"


@require_GET
def arena_page(request: HttpRequest) -> HttpResponse:
    return arena_views.random_page(request, ARENA, TEMPLATE)


@require_GET
def arena_debate(request: HttpRequest, run_id: int) -> HttpResponse:
    return arena_views.item_page(request, ARENA, TEMPLATE, run_id)


@require_POST
def arena_vote(request: HttpRequest, run_id: int) -> HttpResponse:
    return arena_views.vote(request, ARENA, run_id, "evidence_arena_debate")


@sharing.owner_action(Experiment)
def experiment_arena(request: HttpRequest, experiment: Experiment) -> HttpResponse:
    return arena_views.opt_in(
        request,
        experiment,
        "experiment_detail",
        on="Its finished evidence debates are in the arena; the people's answers will show in the report.",
        off="Its debates left the arena; the answers already given stay in the report.",
    )
