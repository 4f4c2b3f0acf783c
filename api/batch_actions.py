"""The rest of a tournament's or an experiment's page over the API (api/batches.py has the first ones): the new
form's estimate, who may see it and its share link, and whether its finished debates are in its arena.

Each is the batch pages' (batches/views.py, batches/arena_views.py): the same rules (sharing managed by the owner
or staff, as on the page; the arena by the owner), the same services (`BatchKind.set_visibility`,
`sharing.reset_share_link`, `batches.arena.set_arena` and `not_blind`) and messages. The estimate reads the spec
as `POST /tournaments` does (every problem at once), refuses what creating it would (the services' checks, which
size it), and sizes it with the same `design.estimate` as the form's line. PATCH on `/{kind}s/{id}` is registered
on api/batches.py's router, which holds that address's GET."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from django.http import HttpRequest
from django.urls import reverse
from ninja import Body, Field, Router, Schema

from api.batches import EXPERIMENTS, SOURCE, TOURNAMENTS, BatchOut, KindApi, batch_out, managed, spec_body
from api.batches import router as batch_router
from api.problems import ApiError
from api.refusals import refusals
from batches.arena import Arena, not_blind, set_arena
from batches.panel import BatchError
from batches.spec import SpecError, SpecErrors
from chaoslm import sharing
from experiments import design as experiment_design
from experiments import services as experiment_services
from experiments import spec as experiment_spec
from experiments.arena import ARENA as EVIDENCE_ARENA
from tournaments import services as tournament_services
from tournaments import spec as tournament_spec
from tournaments.arena import ARENA as MATCH_ARENA

router = Router()


class EstimateOut(Schema):
    debates: int = Field(description="Debates it would run (a tournament's judge replays and an experiment's runs)")
    calls: int = Field(description="The LLM calls they plan")
    sentence: str = Field(description="What the new form says of it")


class VisibilityIn(Schema):
    visibility: Literal["private", "unlisted", "public"]


class ShareLinkOut(Schema):
    share_url: str


class ArenaIn(Schema):
    arena: bool = Field(description="`true`: its finished debates go, without names, to its arena; `false`: out")


class ArenaOut(Schema):
    arena: bool
    blind: bool = Field(description="`false` when its named transcripts can be read (it is not private)")
    message: str = Field(description="What the page says")
    warning: str | None = Field(description="Why its debates are not blind in the arena, when they are not")


def _tournament_estimate(body: dict[str, Any], owner: Any) -> dict[str, Any]:
    spec = tournament_spec.from_mapping(body, None, SOURCE)
    # The checks `create_tournament` makes before anything is saved, which size the tournament as they go.
    size = tournament_services.size_tournament(
        spec.debaters,
        spec.judges,
        spec.questions,
        spec.sides,
        spec.repeats,
        spec.concurrency,
        spec.visibility,
        spec.options,
        spec.formats,
        spec.moderator,
        owner,
    )
    return {"debates": size.debates, "calls": size.calls, "sentence": size.sentence()}


def _experiment_estimate(body: dict[str, Any], owner: Any) -> dict[str, Any]:
    spec = experiment_spec.from_mapping(body, None, SOURCE)
    counts = (len(spec.questions), spec.protocols, len(spec.debaters), len(spec.judges))
    # The checks `create_experiment` makes before anything is saved.
    experiment_services._check(
        spec.questions, spec.protocols, spec.debaters, spec.judges, spec.options, spec.concurrency, spec.visibility
    )
    size = experiment_design.estimate(*counts, spec.options)
    return {"debates": size.runs, "calls": size.calls, "sentence": size.sentence()}


def add_kind(api: KindApi, estimate: Callable[[dict[str, Any], Any], dict[str, Any]], arena: Arena[Any]) -> None:
    """The endpoints of one kind of batch beside api/batches.py's."""
    kind, noun, plural, tag = api.kind, api.noun, api.plural, f"{api.kind.kind}s"
    model = kind.model

    @router.post(
        f"/{plural}/estimate",
        response={200: EstimateOut, **refusals(422)},
        summary=f"Estimate a {noun}'s size",
        tags=[tag],
        operation_id=f"estimate_{kind.kind}",
        description=f"The new-{kind.kind} form's running estimate: the spec `POST /{plural}` takes, read with the "
        "same checks (every problem at once, 422) and the create's own refusals, and how many debates and LLM calls "
        "it would make. Nothing starts.",
        openapi_extra=spec_body(api.spec_schema),
    )
    def size(request: HttpRequest, body: dict[str, Any] = Body(...)) -> Any:  # noqa: B008  (ninja's way)
        try:
            return estimate(body, request.user)
        except SpecErrors as error:
            errors = [{"field": field, "message": message} for field, message in error.problems]
            raise ApiError(
                422, f"The {noun} cannot be sized; each problem is listed in `errors`.", errors=errors
            ) from None
        except (SpecError, BatchError) as error:
            raise ApiError(422, str(error), errors=[{"field": "body", "message": str(error)}]) from None

    def sharingmanaged(request: HttpRequest, batch_id: int) -> Any:
        # The page's rule: staff manage any batch's sharing (one made on the command line may have no owner).
        return managed(kind, request, batch_id, lambda user, b: sharing.can_manage_sharing(user, b, staff=True))

    @batch_router.patch(
        f"/{plural}/{{id:batch_id}}",
        response={200: BatchOut, **refusals(403, 404, 422)},
        summary=f"Change who may see a {noun}",
        tags=[tag],
        operation_id=f"change_{kind.kind}",
    )
    def change(request: HttpRequest, batch_id: int, body: VisibilityIn) -> Any:
        """`visibility`, its debates' with it; pages that may no longer see it close. Its owner or staff."""
        batch = sharingmanaged(request, batch_id)
        kind.set_visibility(batch, body.visibility)
        return batch_out(request, kind, batch)

    @router.post(
        f"/{plural}/{{id:batch_id}}/share-link",
        response={200: ShareLinkOut, **refusals(403, 404)},
        summary=f"Make a new share link for a {noun}",
        tags=[tag],
        operation_id=f"share_link_{kind.kind}",
    )
    def share_link(request: HttpRequest, batch_id: int) -> Any:
        """The old link stops working at once, and pages opened through it close. Its owner or staff."""
        batch = sharingmanaged(request, batch_id)
        sharing.reset_share_link(batch)
        link = reverse(f"{model._meta.model_name}_share", args=[batch.share_token])
        return {"share_url": request.build_absolute_uri(link)}

    @router.put(
        f"/{plural}/{{id:batch_id}}/arena",
        response={200: ArenaOut, **refusals(403, 404, 422)},
        summary=f"Put a {noun}'s finished debates in its arena, or take them out",
        tags=[tag],
        operation_id=f"arena_{kind.kind}",
    )
    def put_arena(request: HttpRequest, batch_id: int, body: ArenaIn) -> Any:
        """The owner's opt-in: its finished debates are served, without names, to anyone in the arena, and the
        votes show in its report; taken out, the votes already cast stay. `blind` is false, with a `warning`, when
        its named transcripts can be read (it is public or unlisted)."""
        batch = managed(kind, request, batch_id)
        set_arena(batch, body.arena)
        warning = not_blind(batch) if batch.arena else ""
        return {
            "arena": batch.arena,
            "blind": not not_blind(batch),
            "message": arena.opted_in if batch.arena else arena.opted_out,
            "warning": warning or None,
        }


add_kind(TOURNAMENTS, _tournament_estimate, MATCH_ARENA)
add_kind(EXPERIMENTS, _experiment_estimate, EVIDENCE_ARENA)
