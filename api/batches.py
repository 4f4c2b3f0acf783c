"""Every kind of batch over the API, built once over the registered kinds (batches/kinds.py) from what each says of
itself (its faces, batches/faces.py): create one from the spec the command line reads (its `<app>/spec.py`: the
same keys, checks and messages, every problem at once), list, status and progress with the ETA,
pause/resume/cancel, delete, the report (the JSON export the page links to) and the other exports, and its events
(api/batch_events.py). The access rules are the batch pages' (batches/views.py, chaoslm/sharing.py): 404 for what
the caller may not see, 403 for what it may see but not change."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import NoReverseMatch, reverse
from ninja import Body, Field, Router, Schema
from pydantic import ValidationError

from api import batch_events, events
from api.access import readable
from api.problems import ApiError
from api.refusals import refusals
from api.schemas import KEY_ERRORS, where
from batches.checks import BatchError, OverBudget
from batches.faces import Faces
from batches.kinds import KINDS, PAUSED, RUNNING, BatchKind
from batches.spec import SpecError, SpecErrors, checked, spec_arguments
from chaoslm import sharing
from chaoslm.sharing import Visibility
from debates.selectors import usage_json

router = Router()

# Where a spec's messages say the problem is (a file's path on the command line).
SOURCE = "spec"
# An export's answer in the OpenAPI document: a CSV file's text or a JSON report (the page's and the share page's).
EXPORT_FILE = {
    "responses": {
        200: {
            "description": "The file",
            "content": {"text/csv": {"schema": {"type": "string"}}, "application/json": {"schema": {"type": "object"}}},
        }
    }
}


class ProgressOut(Schema):
    total: int = Field(description="Debates in all")
    done: int
    running: int
    failed: int
    done_percent: float
    eta_seconds: float | None = Field(
        description="While it runs, the seconds left at the pace of its model calls so far; null before its first "
        "call and once that time has passed (`overdue`)"
    )
    overdue: bool = Field(description="Whether it runs past the time its pace so far said it would take")
    eta_text: str


class BatchSummary(Schema):
    id: int
    name: str
    status: Literal["running", "paused", "cancelled", "completed"]
    visibility: str
    owner: str | None
    created_at: datetime
    finished_at: datetime | None
    url: str | None = Field(description="Its page (null for a kind of batch that has no pages)")


class BatchOut(BatchSummary):
    progress: ProgressOut
    share_url: str | None = Field(None, description="The share link: shown to whom manages its sharing only.")
    cost: dict[str, Any] = Field(
        description="What its calls cost so far: `usd` (exact decimal), `unknown_price_calls` (calls whose price is "
        "unknown, not in `usd`), `text` (as the page shows it), `by_persona` (per persona and model)."
    )


class BatchPage(Schema):
    count: int
    page: int
    pages: int
    results: list[BatchSummary]


@dataclass(frozen=True)
class KindApi:
    """One kind of batch as the API serves it at /<kind>s/...: the kind, and its faces (batches/faces.py), from
    which the endpoints, the same for every kind, are made."""

    kind: BatchKind
    faces: Faces

    @property
    def noun(self) -> str:
        return str(self.kind.model._meta.verbose_name)

    @property
    def plural(self) -> str:
        return f"{self.kind.kind}s"


def kind_apis() -> list[KindApi]:
    """Every registered kind with faces, in the order they registered (their apps' order in INSTALLED_APPS)."""
    return [KindApi(kind, faces) for kind in KINDS.values() if (faces := kind.api_faces()) is not None]


def batch_problems(error: BatchError) -> list[dict[str, str]]:
    """A kind's refusal as the API lists problems: each on the spec key it is about."""
    return [{"field": problem.keys[0], "message": problem.message} for problem in error.problems]


def spec_problems(api: KindApi, body: dict[str, Any], owner: Any) -> tuple[Any, Any, list[dict[str, str]]]:
    """The spec read from `body`, what its kind's checks find of it (its faces' `check`: the size), and every problem of
    it at once: the command line's, in its words (an unknown or missing key, a persona that does not exist, a rule
    its create would refuse), then each wrong type or bound the schema finds in a key the command line let through
    (`{"topic": 5}`, which it would read as the topic "5")."""
    spec = found = None
    try:
        # As the command line reads its spec file, but with no base: no file on the server is read.
        spec, found = checked(
            lambda: api.faces.read(body, None, SOURCE),
            lambda read: api.faces.check(**spec_arguments(read), owner=owner),
        )
        told: list[tuple[str, str]] = []
    except SpecErrors as error:
        told = error.problems
    except SpecError as error:
        told = [("body", str(error))]
    except BatchError as error:
        told = [(problem["field"], problem["message"]) for problem in batch_problems(error)]
    problems = [{"field": field, "message": message} for field, message in told]
    keys = {field.split(".", 1)[0] for field, _ in told}
    try:
        api.faces.spec_schema.model_validate(body)
    except ValidationError as error:
        for e in error.errors():
            field = where(e["loc"], body, e["type"])
            if e["type"] not in KEY_ERRORS and field.split(".", 1)[0] not in keys:
                problems.append({"field": field, "message": str(e["msg"])})
    return spec, found, problems


# Which statuses each owner's action applies to (the kinds' own methods do nothing otherwise).
ACTIONS: dict[str, tuple[str, str, set[str], str]] = {
    "pause": ("Pause", "paused", {RUNNING}, "Start nothing new; the debates in flight finish."),
    "resume": ("Resume", "resumed", {PAUSED, RUNNING}, "Go on with a paused one (or one whose process died)."),
    "cancel": ("Cancel", "cancelled", {RUNNING, PAUSED}, "Start nothing more, for good; the debates in flight count."),
}


def _page(request: HttpRequest, url_name: str, key: Any) -> str | None:
    """A page's absolute address, or None for a kind that has no such page (one with no urls.py)."""
    try:
        return request.build_absolute_uri(reverse(url_name, args=[key]))
    except NoReverseMatch:
        return None


def _summary(request: HttpRequest, batch: Any) -> dict[str, Any]:
    name = batch._meta.model_name
    return {
        "id": batch.pk,
        "name": batch.name,
        "status": batch.status,
        "visibility": batch.visibility,
        "owner": batch.owner.get_username() if batch.owner_id else None,
        "created_at": batch.created_at,
        "finished_at": batch.finished_at,
        "url": _page(request, f"{name}_detail", batch.pk),
    }


def batch_out(request: HttpRequest, kind: BatchKind, batch: Any) -> dict[str, Any]:
    share = None
    if sharing.can_manage_sharing(request.user, batch, staff=True):
        share = _page(request, f"{batch._meta.model_name}_share", batch.share_token)
    return {
        **_summary(request, batch),
        "progress": batch_events.progress_of(kind, batch),
        "share_url": share,
        "cost": usage_json(kind.debates(batch)),
    }


def managed(
    kind: BatchKind,
    request: HttpRequest,
    pk: int,
    may: Callable[[Any, Any], bool] = sharing.is_owner,
    what: str = "do that",
) -> Any:
    """The batch for an owner's action: the page's rule (`sharing.owner_action`'s for pause/resume/cancel,
    `sharing.can_delete` for delete), with a 404 for a batch the caller may not see before any 403."""
    batch = readable(kind.model, request, pk)
    if not may(request.user, batch):
        raise ApiError(403, f"Only the {kind.model._meta.verbose_name}'s owner can {what}.")
    return batch


def spec_body(schema: type[Schema]) -> dict[str, Any]:
    # The body is read as the command line reads its YAML (same checks, same messages); its schema documents it.
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema.json_schema()}}}}


# -- what every kind's endpoints do, given the kind: at /<kind>s/... (one operation per kind, its spec and exports
# its own) and at /batches/{kind}/... (one operation for every kind, the kind read from the registry per request) ---
EVENTS_DOC = events.openapi("event", "`debate` (id: its number), `progress`, `status`, `end`, `closed`")
LIST_DOC = "Your own (`scope=mine`), or everyone else's public ones (`scope=public`), newest first, 50 a page."
GET_DOC = "Its status, and its progress as its page's bar shows it: debates done, running, failed, and the ETA."
DELETE_DOC = "Its owner or staff; with its debates, its run stopped first."
EVENTS_TEXT = (
    "Each of its debates' ends (completed, failed), numbered, then each new one; the progress and status as they "
    "change; `end` once it settles. Resumes exactly with `Last-Event-ID` or `after`."
)


def listing(request: HttpRequest, kind: BatchKind, scope: str, page: int) -> dict[str, Any]:
    model = kind.model
    if scope == "mine":
        found = model.objects.filter(owner=request.user)
    else:
        found = model.objects.filter(Q(visibility=Visibility.PUBLIC) & ~Q(owner=request.user))
    paginator = Paginator(found.select_related("owner"), 50)
    current = paginator.get_page(page)
    results = [_summary(request, b) for b in current]
    return {"count": paginator.count, "page": current.number, "pages": paginator.num_pages, "results": results}


def status(request: HttpRequest, kind: BatchKind, batch_id: int) -> dict[str, Any]:
    return batch_out(request, kind, readable(kind.model, request, batch_id))


def act(request: HttpRequest, kind: BatchKind, action: str, batch_id: int) -> tuple[int, dict[str, Any]]:
    """The owner's pause, resume or cancel (one of ACTIONS): 409 when its status does not allow it."""
    _, done, allowed, _ = ACTIONS[action]
    batch = managed(kind, request, batch_id)
    if batch.status not in allowed:
        raise ApiError(409, f"A {batch.status} {kind.model._meta.verbose_name} cannot be {done}.")
    try:
        getattr(kind, action)(batch)
    except OverBudget as error:
        raise ApiError(402, str(error)) from None
    batch.refresh_from_db()
    return 200, batch_out(request, kind, batch)


def delete(request: HttpRequest, kind: BatchKind, batch_id: int) -> tuple[int, None]:
    kind.delete(managed(kind, request, batch_id, sharing.can_delete, "delete it"))
    return 204, None


async def events(request: HttpRequest, kind: BatchKind, batch_id: int, after: int | None) -> StreamingHttpResponse:
    await sync_to_async(readable)(kind.model, request, batch_id)
    resume = batch_events.resume_point(request.headers.get("Last-Event-ID", ""), after)
    response = StreamingHttpResponse(
        batch_events.stream(kind, batch_id, request.user, request.auth.pk, resume),  # type: ignore[attr-defined]
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def _action_view(kind: BatchKind, action: str) -> Callable[..., Any]:
    """The view of one owner's action at /<kind>s/{id}/<action>. The action is the view's own, not a parameter:
    ninja would read a parameter with a default from the query string (`?action=x` overrode the path's)."""

    def view(request: HttpRequest, batch_id: int) -> Any:
        return act(request, kind, action, batch_id)

    view.__name__ = f"{action}_{kind.kind}"
    return view


def add_kind(api: KindApi) -> None:
    """The endpoints of one kind of batch, under /<kind>s/."""
    kind, noun, plural, tag = api.kind, api.noun, api.plural, f"{api.kind.kind}s"
    model = kind.model

    @router.post(
        f"/{plural}",
        response={201: BatchOut, **refusals(402, 403, 422)},
        summary=f"Create and start a {noun}",
        tags=[tag],
        operation_id=f"create_{kind.kind}",
        description=f"The keys of `manage.py {kind.kind} run`'s spec as JSON, with its checks and messages: every "
        "problem of the spec at once. Personas by name (no files are read).",
        openapi_extra=spec_body(api.faces.spec_schema),
    )
    def create(request: HttpRequest, body: dict[str, Any] = Body(...)) -> Any:  # noqa: B008  (ninja's way)
        spec, _, problems = spec_problems(api, body, request.user)
        if problems:
            detail = f"The {noun} cannot start; each problem is listed in `errors`."
            raise ApiError(422, detail, errors=problems)
        try:
            batch = api.faces.create(**spec_arguments(spec), owner=request.user)
        except OverBudget as error:
            raise ApiError(402, str(error)) from None
        except BatchError as error:
            raise ApiError(422, str(error), errors=batch_problems(error)) from None
        kind.start(batch)
        return 201, batch_out(request, kind, batch)

    @router.get(
        f"/{plural}",
        response={200: BatchPage, **refusals(422)},
        summary=f"List {plural}",
        tags=[tag],
        operation_id=f"list_{kind.kind}s",
        description=LIST_DOC,
    )
    def list_kind(request: HttpRequest, scope: Literal["mine", "public"] = "mine", page: int = 1) -> Any:
        return listing(request, kind, scope, page)

    @router.get(
        f"/{plural}/{{id:batch_id}}",
        response={200: BatchOut, **refusals(404)},
        summary=f"Get a {noun}'s status and progress",
        tags=[tag],
        operation_id=f"get_{kind.kind}",
        description=GET_DOC,
    )
    def get(request: HttpRequest, batch_id: int) -> Any:
        return status(request, kind, batch_id)

    for action, (verb, _, _, description) in ACTIONS.items():
        router.post(
            f"/{plural}/{{id:batch_id}}/{action}",
            # A resume its owner's spent monthly budget refuses is a 402, as a create over budget is.
            response={200: BatchOut, **refusals(*((402,) if action == "resume" else ()), 403, 404, 409)},
            summary=f"{verb} a {noun}",
            tags=[tag],
            operation_id=f"{action}_{kind.kind}",
            description=description,
        )(_action_view(kind, action))

    @router.delete(
        f"/{plural}/{{id:batch_id}}",
        response={204: None, **refusals(403, 404)},
        summary=f"Delete a {noun}",
        tags=[tag],
        operation_id=f"delete_{kind.kind}",
        description=DELETE_DOC,
    )
    def delete_kind(request: HttpRequest, batch_id: int) -> Any:
        return delete(request, kind, batch_id)

    @router.get(
        f"/{plural}/{{id:batch_id}}/report",
        response={200: dict[str, Any], **refusals(404)},
        summary=f"A {noun}'s report",
        tags=[tag],
        operation_id=f"report_{kind.kind}",
    )
    def report(request: HttpRequest, batch_id: int) -> Any:
        """The page's `report.json` export: every figure its page shows, a figure undefined as null with why."""
        return api.faces.report(readable(model, request, batch_id))

    files = ", ".join(sorted(api.faces.files))

    @router.get(
        f"/{plural}/{{id:batch_id}}/export/{{file}}",
        response={200: str, **refusals(404)},
        summary=f"Export a {noun}",
        tags=[tag],
        operation_id=f"export_{kind.kind}",
        description=f"The page's export files: {files}.",
        openapi_extra=EXPORT_FILE,
    )
    def export(request: HttpRequest, batch_id: int, file: str) -> HttpResponse:
        batch = readable(model, request, batch_id)
        if file not in api.faces.files:
            raise ApiError(404, f"No such export; the {noun}'s are {files}.")
        text = api.faces.files[file](batch)
        content_type = "application/json" if file.endswith(".json") else "text/csv; charset=utf-8"
        response = HttpResponse(text, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{kind.kind}-{batch.pk}-{file}"'
        return response

    @router.get(
        f"/{plural}/{{id:batch_id}}/events",
        response={200: str, **refusals(404, 422)},
        summary=f"Follow a {noun}'s events (Server-Sent Events)",
        tags=[tag],
        operation_id=f"events_{kind.kind}",
        description=EVENTS_TEXT,
        openapi_extra=EVENTS_DOC,
    )
    async def events_kind(request: HttpRequest, batch_id: int, after: int | None = None) -> Any:
        return await events(request, kind, batch_id, after)


# -- /batches/{kind}/...: every registered kind, its name looked up per request ----------------------------------
class KindOut(Schema):
    kind: str = Field(description="Its name in /batches/{kind}/... (and, for a kind with its own, /{kind}s/...)")
    noun: str
    plural: str


# Any text: a name no kind has is a 404 naming the kinds, whatever its length.
KindName = str
BATCHES = "batches"


def kind_of(name: str) -> BatchKind:
    """The registered kind called `name`, or a 404 naming those there are."""
    found = KINDS.get(name)
    if found is None:
        raise ApiError(404, f"There is no kind of batch called {name!r}; the kinds are {', '.join(KINDS)}.")
    return found


@router.get(
    "/batches",
    response={200: list[KindOut], **refusals()},
    summary="List the kinds of batch",
    tags=[BATCHES],
    operation_id="list_batch_kinds",
)
def batch_kinds(request: HttpRequest) -> Any:
    """Every kind of batch this site runs (tournaments, experiments, ...): each one's batches are at
    /batches/{kind}/, with the same status, owner's actions, delete and events as its own addresses."""
    return [
        {"kind": k.kind, "noun": str(k.model._meta.verbose_name), "plural": str(k.model._meta.verbose_name_plural)}
        for k in KINDS.values()
    ]


@router.get(
    "/batches/{kind}",
    response={200: BatchPage, **refusals(404, 422)},
    summary="List batches of a kind",
    tags=[BATCHES],
    operation_id="list_batches",
    description=LIST_DOC,
)
def list_batches(request: HttpRequest, kind: KindName, scope: Literal["mine", "public"] = "mine", page: int = 1) -> Any:
    return listing(request, kind_of(kind), scope, page)


@router.get(
    "/batches/{kind}/{id:batch_id}",
    response={200: BatchOut, **refusals(404)},
    summary="Get a batch's status and progress",
    tags=[BATCHES],
    operation_id="get_batch",
    description=GET_DOC,
)
def get_batch(request: HttpRequest, kind: KindName, batch_id: int) -> Any:
    return status(request, kind_of(kind), batch_id)


def _batch_action(action: str) -> Callable[..., Any]:
    """The view of one owner's action at /batches/{kind}/{id}/<action>, the kind read from the path."""

    def view(request: HttpRequest, kind: KindName, batch_id: int) -> Any:
        return act(request, kind_of(kind), action, batch_id)

    view.__name__ = f"{action}_batch"
    return view


for _action, (_verb, _, _, _description) in ACTIONS.items():
    router.post(
        f"/batches/{{kind}}/{{id:batch_id}}/{_action}",
        response={200: BatchOut, **refusals(*((402,) if _action == "resume" else ()), 403, 404, 409)},
        summary=f"{_verb} a batch",
        tags=[BATCHES],
        operation_id=f"{_action}_batch",
        description=_description,
    )(_batch_action(_action))


@router.delete(
    "/batches/{kind}/{id:batch_id}",
    response={204: None, **refusals(403, 404)},
    summary="Delete a batch",
    tags=[BATCHES],
    operation_id="delete_batch",
    description=DELETE_DOC,
)
def delete_batch(request: HttpRequest, kind: KindName, batch_id: int) -> Any:
    return delete(request, kind_of(kind), batch_id)


@router.get(
    "/batches/{kind}/{id:batch_id}/events",
    response={200: str, **refusals(404, 422)},
    summary="Follow a batch's events (Server-Sent Events)",
    tags=[BATCHES],
    operation_id="events_batch",
    description=EVENTS_TEXT,
    openapi_extra=EVENTS_DOC,
)
async def batch_events_stream(request: HttpRequest, kind: KindName, batch_id: int, after: int | None = None) -> Any:
    return await events(request, kind_of(kind), batch_id, after)


for _api in kind_apis():
    add_kind(_api)
