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

from api.batches import (
    COMPARISONS,
    EXPERIMENTS,
    TOURNAMENTS,
    BatchOut,
    KindApi,
    batch_out,
    managed,
    spec_body,
    spec_problems,
)
from api.batches import router as batch_router
from api.problems import ApiError
from api.refusals import refusals
from audience.arena import Arena
from batches.arena import not_blind, set_arena
from batches.checks import cost_sentence
from chaoslm import costs, sharing
from comparisons import services as comparison_services
from experiments.arena import ARENA as EVIDENCE_ARENA
from tournaments.arena import ARENA as MATCH_ARENA

router = Router()


class CostOut(Schema):
    low_usd: str = Field(description="The low end, in dollars (exact decimal)")
    high_usd: str = Field(description="The high end, in dollars (exact decimal)")
    unknown_price: bool = Field(description="Some of its models have no known price (not in the range)")
    sentence: str = Field(description="What the new form says of its cost")


class TimeOut(Schema):
    low_seconds: float = Field(description="At the fewest calls (every stop condition holding at its first round)")
    high_seconds: float = Field(description="At the most calls")
    text: str = Field(description="The time in minutes, as the new form says it: 'about 1 to 2 minutes'")
    seconds_per_call: float = Field(description="The pace: this site's recent calls, else the guess for its model")
    measured: bool = Field(description="Whether the pace is measured on this site's calls (else a guess)")
    calls_at_once: int = Field(description="Calls answered together: concurrency, within the embedded model's slots")
    basis: str = Field(description="How the time was reckoned, in the form's words")


class EstimateOut(Schema):
    debates: int = Field(description="Debates it would run (a tournament's judge replays and an experiment's runs)")
    calls: int = Field(description="The LLM calls they plan")
    sentence: str = Field(description="What the new form says of it")
    cost: CostOut = Field(description="What its calls would cost, low to high, as the new form says")
    time: TimeOut = Field(description="How long its calls take (the same figures as the form and the command line)")


class ComparisonEstimateOut(EstimateOut):
    fewest_calls: int = Field(description="The fewest LLM calls: every stop condition holding at its first round")


def _cost(cost: costs.CostRange) -> dict[str, Any]:
    return {**cost.as_json(), "sentence": cost_sentence(cost)}


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


def _estimate(found: Any) -> dict[str, Any]:
    """What a kind's checks found (its `size`, `cost` and `time`), as the estimate answers it."""
    size = found.size
    return {
        "debates": size.debates,
        "calls": size.calls,
        "sentence": size.sentence(),
        "cost": _cost(found.cost),
        "time": found.time.as_json(),
    }


def _comparison_estimate(found: comparison_services.Checked) -> dict[str, Any]:
    return {**_estimate(found), "fewest_calls": found.size.fewest_calls}


def add_kind(
    api: KindApi,
    estimate: Callable[[Any], dict[str, Any]],
    arena: Arena[Any] | None = None,
    schema: type[EstimateOut] = EstimateOut,
) -> None:
    """The endpoints of one kind of batch beside api/batches.py's (its arena's opt-in when it has one; `schema`,
    its estimate's answer)."""
    kind, noun, plural, tag = api.kind, api.noun, api.plural, f"{api.kind.kind}s"
    model = kind.model

    @router.post(
        f"/{plural}/estimate",
        response={200: schema, **refusals(422)},
        summary=f"Estimate a {noun}'s size",
        tags=[tag],
        operation_id=f"estimate_{kind.kind}",
        description=f"The new-{kind.kind} form's running estimate: the spec `POST /{plural}` takes, read with the "
        "same checks (every problem at once, 422) and the create's own refusals, and how many debates and LLM calls "
        "it would make. Nothing starts.",
        openapi_extra=spec_body(api.spec_schema),
    )
    def size(request: HttpRequest, body: dict[str, Any] = Body(...)) -> Any:  # noqa: B008  (ninja's way)
        _, found, problems = spec_problems(api, body, request.user)
        if problems:
            raise ApiError(422, f"The {noun} cannot start; each problem is listed in `errors`.", errors=problems)
        return estimate(found)

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

    if arena is None:
        return
    served: Arena[Any] = arena

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
            "message": served.opted_in if batch.arena else served.opted_out,
            "warning": warning or None,
        }


add_kind(TOURNAMENTS, _estimate, MATCH_ARENA)
add_kind(EXPERIMENTS, _estimate, EVIDENCE_ARENA)
add_kind(COMPARISONS, _comparison_estimate, schema=ComparisonEstimateOut)
