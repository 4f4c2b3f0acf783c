"""Rooms over the API, read side and creation: the new-room form's rules, the room list, a room as its export
shows it to the caller (whispers and system prompts for its owner only). Calls rooms' public functions only:
rooms.forms.NewRoomForm, rooms.services.create_room / create_from_template, rooms.selectors.rooms_of,
rooms.exports.as_dict / as_markdown / as_json."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja import Field, Router, Schema

from api.access import may_write, readable
from api.problems import ApiError, refusals
from chaoslm import sharing
from rooms import exports, selectors, services
from rooms.forms import NewRoomForm
from rooms.models import Room

router = Router(tags=["rooms"])


class RoomIn(Schema):
    title: str
    personas: list[int] = Field(default_factory=list, description="Persona ids, in the order they answer.")
    template: int | None = Field(None, description="One of your room templates, instead of personas.")
    visibility: Literal["private", "unlisted", "public"] = "private"


class RoomAgentOut(Schema):
    name: str
    role: str
    participating: bool
    talkativeness: float
    system_prompt: str | None = Field(None, description="The owner's only.")


class RoomMessageOut(Schema):
    id: int
    kind: str
    author: str
    content: str
    active: bool
    created_at: str
    whisper_to: list[str] | None = Field(None, description="A whisper's addressees: the owner's only.")


class RoomSummary(Schema):
    id: int
    title: str
    mode: str
    visibility: str
    url: str


class RoomOut(RoomSummary):
    turn_order: str
    agents: list[RoomAgentOut]
    messages: list[RoomMessageOut]


def _summary(request: HttpRequest, room: Room) -> dict[str, Any]:
    url = request.build_absolute_uri(reverse("room_detail", args=[room.pk]))
    return {"id": room.pk, "title": room.title, "mode": room.mode, "visibility": room.visibility, "url": url}


def room_out(request: HttpRequest, room: Room) -> dict[str, Any]:
    return {**exports.as_dict(room, include_private=sharing.is_owner(request.user, room)), **_summary(request, room)}


@router.post("/rooms", response={201: RoomOut, **refusals(403, 422)}, summary="Create a room")
def create_room(request: HttpRequest, body: RoomIn) -> Any:
    """The new-room form's rules and messages: personas (in the order they answer) or a template."""
    may_write(request)
    data: dict[str, Any] = {
        "title": body.title,
        "visibility": body.visibility,
        "personas": [str(p) for p in body.personas],
        "order": ",".join(str(p) for p in body.personas),
    }
    if body.template is not None:
        data["template"] = str(body.template)
    form = NewRoomForm(data, owner=request.user)
    if not form.is_valid():
        errors = [{"field": name, "message": str(m)} for name, messages in form.errors.items() for m in messages]
        raise ApiError(422, "The room cannot be made; each problem is listed in `errors`.", errors=errors)
    cleaned = form.cleaned_data
    if cleaned["template"] is not None:
        room = services.create_from_template(request.user, cleaned["template"], cleaned["title"], cleaned["visibility"])
    else:
        room = services.create_room(request.user, cleaned["title"], cleaned["visibility"], cleaned["personas"])
    return 201, room_out(request, room)


@router.get("/rooms", response={200: list[RoomSummary], **refusals()}, summary="List your rooms")
def list_rooms(request: HttpRequest) -> Any:
    return [_summary(request, room) for room in selectors.rooms_of(request.user)]


@router.get("/rooms/{id:room_id}", response={200: RoomOut, **refusals(404)}, summary="Get a room")
def get_room(request: HttpRequest, room_id: int) -> Any:
    """Its agents and messages as its export shows them to you: whispers and system prompts for the owner only."""
    return room_out(request, readable(Room, request, room_id))


@router.get(
    "/rooms/{id:room_id}/export/{kind}",
    response={200: str, **refusals(404, 422)},
    summary="Export a room's transcript",
    openapi_extra={
        "responses": {
            200: {
                "description": "The transcript, as the room's export shows it to you",
                "content": {
                    "text/markdown": {"schema": {"type": "string"}},
                    "application/json": {"schema": {"type": "object"}},
                },
            }
        }
    },
)
def export_room(request: HttpRequest, room_id: int, kind: Literal["md", "json"]) -> HttpResponse:
    room = readable(Room, request, room_id)
    private = sharing.is_owner(request.user, room)
    if kind == "md":
        return HttpResponse(
            exports.as_markdown(room, include_private=private), content_type="text/markdown; charset=utf-8"
        )
    return HttpResponse(exports.as_json(room, include_private=private), content_type="application/json")
