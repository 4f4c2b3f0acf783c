"""What a share link opens, over the API: a debate, a room, a tournament or an experiment that is not private, for
whoever holds its link's token, as its share page shows it (chaoslm/sharing.py: `visible_or_404` by token, the
same 404 for a wrong token as for a private thing), with its exports and, for a debate, its poll and vote.

The same selectors and rules as the share pages (debates/views.py: `debate_share`, rooms/views.py: `room_share`,
batches/views.py: `page_views`): what the page at the link shows its viewer (debates/privacy.py with `via_share`),
and a share link's export is what anyone may see, whoever asks."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from ninja import Path, Router

from api.batches import EXPORT_FILE, BatchOut, KindApi, batch_out, kind_apis
from api.debates import DebateOut, debate_out
from api.polls import PollOut, VoteIn, cast_vote, poll_out
from api.problems import ApiError
from api.refusals import refusals
from api.rooms import RoomOut, room_out
from chaoslm import sharing
from debates import privacy, transcripts
from debates.models import Debate
from rooms import exports as room_exports
from rooms.models import Room

router = Router()

# A share token is 32 characters (sharing.new_share_token); anything much longer is no token.
Token = Path(..., max_length=64, description="The share link's token: the last part of its address")

MARKDOWN_OR_JSON = {
    "responses": {
        200: {
            "description": "The transcript, as the share page shows it",
            "content": {
                "text/markdown": {"schema": {"type": "string"}},
                "application/json": {"schema": {"type": "object"}},
            },
        }
    }
}


def _debate(request: HttpRequest, token: str) -> Debate:
    return sharing.visible_or_404(Debate, request.user, token=token)


@router.get(
    "/shared/debates/{token}",
    response={200: DebateOut, **refusals(404)},
    summary="A shared debate",
    tags=["debates"],
)
def shared_debate(request: HttpRequest, token: str = Token) -> Any:
    """As its share page shows it to you: the private thinking only where that page shows it."""
    return debate_out(request, _debate(request, token), via_share=True)


@router.get(
    "/shared/debates/{token}/export/{kind}",
    response={200: str, **refusals(404, 422)},
    summary="Export a shared debate's transcript",
    tags=["debates"],
    openapi_extra=MARKDOWN_OR_JSON,
)
def shared_debate_export(request: HttpRequest, kind: Literal["md", "json"], token: str = Token) -> HttpResponse:
    debate = _debate(request, token)
    access = privacy.access(request.user, debate, via_share=True)
    if kind == "md":
        return HttpResponse(transcripts.as_markdown(debate, access=access), content_type="text/markdown; charset=utf-8")
    return HttpResponse(transcripts.as_json(debate, access=access), content_type="application/json")


@router.get(
    "/shared/debates/{token}/poll",
    response={200: PollOut, **refusals(404)},
    summary="See a shared debate's audience poll",
    tags=["debates"],
)
def shared_poll(request: HttpRequest, token: str = Token) -> Any:
    return poll_out(request, _debate(request, token), via_share=True)


@router.post(
    "/shared/debates/{token}/poll/vote",
    response={200: PollOut, **refusals(400, 403, 404, 409)},
    summary="Vote in a shared debate's audience poll",
    tags=["debates"],
)
def shared_vote(request: HttpRequest, body: VoteIn, token: str = Token) -> Any:
    """As `POST /debates/{id}/poll/vote`: your account's vote, the same refusals."""
    return cast_vote(request, _debate(request, token), body, via_share=True)


@router.get("/shared/rooms/{token}", response={200: RoomOut, **refusals(404)}, summary="A shared room", tags=["rooms"])
def shared_room(request: HttpRequest, token: str = Token) -> Any:
    """As its share page shows it to you: whispers and system prompts for its owner only."""
    return room_out(request, sharing.visible_or_404(Room, request.user, token=token))


@router.get(
    "/shared/rooms/{token}/export/{kind}",
    response={200: str, **refusals(404, 422)},
    summary="Export a shared room's transcript",
    tags=["rooms"],
    openapi_extra=MARKDOWN_OR_JSON,
)
def shared_room_export(request: HttpRequest, kind: Literal["md", "json"], token: str = Token) -> HttpResponse:
    """What anyone may see, whoever asks: a share link is for passing on."""
    room = sharing.visible_or_404(Room, request.user, token=token)
    if kind == "md":
        return HttpResponse(room_exports.as_markdown(room, include_private=False), content_type="text/markdown")
    return HttpResponse(room_exports.as_json(room, include_private=False), content_type="application/json")


def add_kind(api: KindApi) -> None:
    kind, noun, plural = api.kind, api.noun, api.plural
    model = kind.model
    files = ", ".join(sorted(api.faces.files))

    @router.get(
        f"/shared/{plural}/{{token}}",
        response={200: BatchOut, **refusals(404)},
        summary=f"A shared {noun}'s status and progress",
        tags=[plural],
        operation_id=f"shared_{kind.kind}",
    )
    def shared(request: HttpRequest, token: str = Token) -> Any:
        return batch_out(request, kind, sharing.visible_or_404(model, request.user, token=token))

    @router.get(
        f"/shared/{plural}/{{token}}/export/{{file}}",
        response={200: str, **refusals(404)},
        summary=f"Export a shared {noun}",
        tags=[plural],
        operation_id=f"shared_export_{kind.kind}",
        description=f"The share page's export files: {files}.",
        openapi_extra=EXPORT_FILE,
    )
    def shared_export(request: HttpRequest, file: str = Path(..., max_length=40), token: str = Token) -> HttpResponse:
        batch = sharing.visible_or_404(model, request.user, token=token)
        if file not in api.faces.files:
            raise ApiError(404, f"No such export; the {noun}'s are {files}.")
        content_type = "application/json" if file.endswith(".json") else "text/csv; charset=utf-8"
        return HttpResponse(api.faces.files[file](batch), content_type=content_type)


for _api in kind_apis():
    add_kind(_api)
