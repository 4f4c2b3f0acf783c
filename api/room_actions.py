"""The rest of the room page's actions over the API (api/rooms.py has the first ones): its agents' settings, its
memory, saving it as a template (and the templates to open a room from), asking a failed agent again, making a
message active or not, its visibility and share link, and deleting it.

Each is the room page's (rooms/views.py): the same checks (`owned`: the page's owner rule; `deletable`: its
owner or staff), the same rooms.services, rooms.forms and rooms.work functions with their refusals and messages
(422), and the same pushes to the room's open pages. The operations on `/rooms/{id}` itself (PATCH, DELETE) are
registered on api/rooms.py's router, which holds that address's GET: one address, one router."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Field, Router, Schema

from api.access import deletable, owned
from api.problems import ApiError
from api.refusals import refusals
from api.rooms import RoomMessageOut, RoomOut, room_out
from api.rooms import router as room_router
from chaoslm import sharing
from chaoslm.http import MAX_ID
from chaoslm.sharing import Visibility
from rooms import broadcast, exports, selectors, services, work
from rooms.forms import MemoryForm
from rooms.models import Room, RoomAgent, RoomMessage, RoomTemplate

router = Router(tags=["rooms"])

Id = Annotated[int, Field(ge=1, le=MAX_ID)]
MEMORY_CHOICES = ", ".join(f"`{value}` ({label})" for value, label in Room.Memory.choices)


class AgentSettingIn(Schema):
    id: Id = Field(description="The agent's id (GET /rooms/{id} lists them).")
    talkativeness: int = Field(description="0 to 100: how likely it is to answer when it may.")
    sees_earlier: bool = Field(False, description="It sees the messages from before it joined.")


class AgentSettingsIn(Schema):
    agents: list[AgentSettingIn] = Field(
        max_length=1000, description="As the page's panel: an agent left out keeps its talkativeness."
    )


class AgentSettingOut(Schema):
    id: int
    name: str
    talkativeness: int
    sees_earlier: bool


class MemoryIn(Schema):
    memory: str = Field(max_length=20, description="What happens when the context fills up: " + MEMORY_CHOICES)
    summarizer: Id | None = Field(None, description="The persona whose model summarizes; none: the default model.")


class MemoryOut(Schema):
    memory: str
    summarizer: int | None


class TemplateIn(Schema):
    name: str = Field(description="At most 200 characters; the same name replaces your template of that name.")


class TemplateOut(Schema):
    id: int
    name: str
    agents: int = Field(description="How many agents a room opened from it has.")
    created_at: str


class VisibilityIn(Schema):
    visibility: Literal["private", "unlisted", "public"]


class ShareLinkOut(Schema):
    share_url: str


def _share_url(request: HttpRequest, room: Room) -> str:
    return request.build_absolute_uri(reverse("room_share", args=[room.share_token]))


def _refused(error: services.RoomError | str, field: str = "body") -> ApiError:
    return ApiError(422, str(error), errors=[{"field": field, "message": str(error)}])


def _settings(room: Room) -> list[dict[str, Any]]:
    return [
        {"id": a.pk, "name": a.name, "talkativeness": a.talkativeness, "sees_earlier": a.sees_earlier}
        for a in selectors.agents_in_order(room)
    ]


@router.put(
    "/rooms/{id:room_id}/agent-settings",
    response={200: list[AgentSettingOut], **refusals(403, 404, 422)},
    summary="Set a room's agents' talkativeness",
)
def set_agent_settings(request: HttpRequest, room_id: int, body: AgentSettingsIn) -> Any:
    """The talkativeness panel: each agent's talkativeness (0-100) and whether it sees earlier messages; the same
    service and messages as the page's Save."""
    room = owned(Room, request, room_id)
    values: dict[str, str] = {}
    for agent in body.agents:
        values[f"talk-{agent.id}"] = str(agent.talkativeness)
        if agent.sees_earlier:
            values[f"earlier-{agent.id}"] = "on"
    try:
        services.set_agent_settings(room, values)
    except services.RoomError as error:
        raise _refused(error, "agents") from None
    broadcast.push_status(room)
    return _settings(room)


@router.put(
    "/rooms/{id:room_id}/memory",
    response={200: MemoryOut, **refusals(403, 404, 422)},
    summary="Set a room's memory",
)
def set_memory(request: HttpRequest, room_id: int, body: MemoryIn) -> Any:
    """What happens when the context fills up, and which model summarizes: the memory form's rules and messages."""
    room = owned(Room, request, room_id)
    data = {"memory": body.memory, "summarizer": "" if body.summarizer is None else str(body.summarizer)}
    form = MemoryForm(data, instance=room)
    if not form.is_valid():
        errors = [{"field": name, "message": str(m)} for name, messages in form.errors.items() for m in messages]
        raise ApiError(422, "The memory cannot be set; each problem is listed in `errors`.", errors=errors)
    form.save()
    return {"memory": room.memory, "summarizer": room.summarizer_id}


def _template(template: RoomTemplate) -> dict[str, Any]:
    return {
        "id": template.pk,
        "name": template.name,
        "agents": len(template.data.get("agents", [])),
        "created_at": template.created_at.isoformat(),
    }


@router.post(
    "/rooms/{id:room_id}/template",
    response={201: TemplateOut, **refusals(403, 404, 422)},
    summary="Save a room as a template",
)
def save_template(request: HttpRequest, room_id: int, body: TemplateIn) -> Any:
    """Its agents in order (with their talkativeness), turn order and settings, to open rooms from
    (`POST /rooms` with `template`)."""
    room = owned(Room, request, room_id)
    try:
        template = services.save_template(room, body.name)
    except services.RoomError as error:
        raise _refused(error, "name") from None
    return 201, _template(template)


@router.get(
    "/room-templates",
    response={200: list[TemplateOut], **refusals()},
    summary="List your room templates",
)
def list_templates(request: HttpRequest) -> Any:
    """The templates the new-room form offers you."""
    return [_template(t) for t in RoomTemplate.objects.filter(owner=request.user)]


@router.post(
    "/rooms/{id:room_id}/agents/{id:agent_id}/retry",
    response={202: RoomOut, **refusals(403, 404)},
    summary="Ask a room's agents again after a failure",
)
def retry_agent(request: HttpRequest, room_id: int, agent_id: int) -> Any:
    """The failed agent's Retry: the round's (manual mode) or the loop's (auto mode) unanswered agents are asked
    again."""
    room = owned(Room, request, room_id)
    get_object_or_404(RoomAgent, pk=agent_id, room=room)
    work.retry(room)
    broadcast.push_status(room)
    return 202, room_out(request, room)


@router.post(
    "/rooms/{id:room_id}/messages/{id:message_id}/toggle",
    response={200: RoomMessageOut, **refusals(403, 404)},
    summary="Make a room's message active or inactive",
)
def toggle_message(request: HttpRequest, room_id: int, message_id: int) -> Any:
    """An inactive message stays in the history, shown faded, and the agents no longer see it; toggled again, they
    do. A system message or a pending answer does not change."""
    room = owned(Room, request, room_id)
    message = services.toggle_active(get_object_or_404(RoomMessage, pk=message_id, room=room))
    broadcast.push_messages(room, message)
    return exports.message_entry(message)


@room_router.patch(
    "/rooms/{id:room_id}",
    response={200: RoomOut, **refusals(403, 404, 422)},
    summary="Change who may see a room",
)
def change_room(request: HttpRequest, room_id: int, body: VisibilityIn) -> Any:
    """`visibility`: private, unlisted (anyone with its share link) or public; made private or no longer public,
    the pages that may no longer see it close (and leaving public gives it a new share link)."""
    room = owned(Room, request, room_id)
    sharing.set_visibility(room, Visibility(body.visibility))
    return room_out(request, room)


@room_router.delete(
    "/rooms/{id:room_id}",
    response={204: None, **refusals(403, 404)},
    summary="Delete a room",
)
def delete_room(request: HttpRequest, room_id: int) -> Any:
    """Its owner or staff; its auto mode or round is stopped first, then it goes with its messages."""
    work.delete(deletable(Room, request, room_id))
    return 204, None


@router.post(
    "/rooms/{id:room_id}/share-link",
    response={200: ShareLinkOut, **refusals(403, 404)},
    summary="Make a new share link for a room",
)
def new_share_link(request: HttpRequest, room_id: int) -> Any:
    """The old link stops working at once, and pages opened through it close."""
    room = owned(Room, request, room_id)
    sharing.reset_share_link(room)
    return {"share_url": _share_url(request, room)}
