"""The rest of a batch's page over the API (api/batches.py has the first ones), for every kind with faces: the new
form's estimate, who may see it and its share link, and whether its finished debates are in its arena.

Each is the batch pages' (batches/views.py, batches/arena_views.py): the same rules (sharing managed by the owner
or staff, as on the page; the arena by the owner), the same services (`BatchKind.set_visibility`,
`sharing.reset_share_link`, `batches.arena.set_arena` and `not_blind`) and messages. The estimate reads the spec
as `POST /<kind>s` does (every problem at once), refuses what creating it would (the services' checks, which
size it), and answers what they found as the kind's faces say (`Faces.estimate`: the figures of the form's line).
PATCH on `/{kind}s/{id}` is registered on api/batches.py's router, which holds that address's GET."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest
from django.urls import reverse
from ninja import Body, Field, Router, Schema

from api.batches import BatchOut, KindApi, batch_out, kind_apis, managed, spec_body, spec_problems
from api.batches import router as batch_router
from api.problems import ApiError
from api.refusals import refusals
from audience.arena import Arena
from batches.arena import not_blind, set_arena
from chaoslm import sharing

router = Router()


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


def add_kind(api: KindApi) -> None:
    """The endpoints of one kind of batch beside api/batches.py's (its arena's opt-in when its faces name one)."""
    kind, noun, plural, tag = api.kind, api.noun, api.plural, f"{api.kind.kind}s"
    model = kind.model

    @router.post(
        f"/{plural}/estimate",
        response={200: api.faces.estimate_schema, **refusals(422)},
        summary=f"Estimate a {noun}'s size",
        tags=[tag],
        operation_id=f"estimate_{kind.kind}",
        description=f"The new-{kind.kind} form's running estimate: the spec `POST /{plural}` takes, read with the "
        "same checks (every problem at once, 422) and the create's own refusals, and how many debates and LLM calls "
        "it would make. Nothing starts.",
        openapi_extra=spec_body(api.faces.spec_schema),
    )
    def size(request: HttpRequest, body: dict[str, Any] = Body(...)) -> Any:  # noqa: B008  (ninja's way)
        _, found, problems = spec_problems(api, body, request.user)
        if problems:
            raise ApiError(422, f"The {noun} cannot start; each problem is listed in `errors`.", errors=problems)
        return api.faces.estimate(found)

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

    if api.faces.arena is None:
        return
    served: Arena[Any] = api.faces.arena

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


for _api in kind_apis():
    add_kind(_api)
