"""Rooms over the API: creation with the new-room form's rules, the room list, a room as its export shows it to
the caller (whispers and system prompts for its owner only), and the owner's actions (say, mode, interrupt,
keep or drop the pending answers, add, remove and pause agents, the turn order and who speaks next).

Each action is the room page's (rooms/views.py): the same checks (`owned`: the page's `owner_action` rule, and a
read-only token changes nothing), the same rooms.services function with its refusals (RoomError, answered 422
with its message), the same work started (rooms.work) and the same pushes to the room's open pages
(rooms.broadcast), so a page watching the room sees what a script does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Field, Router, Schema

from api.access import owned, readable
from api.problems import ApiError
from api.refusals import refusals
from api.schemas import Id
from chaoslm import costs, limits, sharing
from chaoslm.schemas import Input
from personas.models import Persona
from rooms import broadcast, exports, selectors, services, work
from rooms import limits as room_limits
from rooms import queue as q
from rooms.forms import NewRoomForm, SettingsForm, TurnOrderForm
from rooms.models import Room, RoomAgent
from rooms.table import queue_agents

router = Router(tags=["rooms"])


class RoomIn(Input):
    title: str = Field(max_length=Room._meta.get_field("title").max_length)
    personas: list[Id] = Field(
        default_factory=list, max_length=100, description="Persona ids, in the order they answer."
    )
    template: Id | None = Field(None, description="One of your room templates, instead of personas.")
    visibility: Literal["private", "unlisted", "public"] = "private"


class RoomAgentOut(Schema):
    id: int
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
    interrupted: bool = Field(False, description="An answer cut off when the owner took the floor.")
    summarised_in: int | None = Field(None, description="The summary this message is folded into.")
    folds: int | None = Field(None, description="A summary: how many earlier messages it folds.")
    cut_at_tokens: int | None = Field(
        None, description="A reply the model's token limit cut off (it may end mid-word): the tokens it had."
    )
    embedded_model: str | None = Field(None, description="The embedded model that wrote it (it runs offline).")


class RoomSummary(Schema):
    id: int
    title: str
    mode: str
    visibility: str
    url: str


class RoomOut(RoomSummary):
    turn_order: str
    response_delay: int
    max_messages: int
    max_wait: int
    pause_reason: str = Field(description="Why auto mode last stopped by itself (a limit, a failure); else empty.")
    agents: list[RoomAgentOut] = Field(description="In the order they answer.")
    up_next: list[int] = Field(description="Pick order: the agents' ids in the order they are up next.")
    messages: list[RoomMessageOut]
    pending: list[RoomMessageOut] = Field(description="A manual round's answers, waiting to be kept or dropped.")
    share_url: str | None = Field(None, description="The share link: shown to the owner only.")
    cost: dict[str, Any] = Field(
        description="What its calls cost: `usd` (exact decimal), `unknown_price_calls` (not in `usd`), `text`, "
        "`by_persona` (per speaker and model)."
    )


class SayIn(Input):
    text: str = Field(max_length=services.MAX_MESSAGE_CHARS, description="@name calls on an agent.")
    to: list[Id] = Field(default_factory=list, max_length=100, description="Agent ids: a whisper to these agents only.")


class ModeIn(Input):
    mode: Literal["auto", "manual"]


class KeepIn(Input):
    keep: list[Id] = Field(
        default_factory=list,
        max_length=1000,
        description="The pending answers to keep; the others join the history inactive.",
    )


class AgentIn(Input):
    persona: Id


class AgentChange(Input):
    participating: bool


class SettingsIn(Input):
    response_delay: int = Field(3, description="Seconds between messages in auto mode (1-30).")
    max_messages: int = Field(20, description="Auto mode stops after this many messages (0: no limit).")
    max_wait: int = Field(60, description="Seconds to wait for an agent's answer (5-600).")


class TurnOrderIn(Input):
    turn_order: Literal["round_robin", "selector", "pick"]
    selector: Id | None = Field(None, description="The persona whose model picks (selector order); none: default.")
    selector_repeat: bool = False
    candidates: list[Id] | None = Field(
        None, max_length=1000, description="The agents the selector may name; none: all of them."
    )


def _summary(request: HttpRequest, room: Room) -> dict[str, Any]:
    url = request.build_absolute_uri(reverse("room_detail", args=[room.pk]))
    return {"id": room.pk, "title": room.title, "mode": room.mode, "visibility": room.visibility, "url": url}


def room_out(request: HttpRequest, room: Room) -> dict[str, Any]:
    owner = sharing.is_owner(request.user, room)
    data = exports.as_dict(room, include_private=owner)
    _messages, pending = selectors.page_messages(room, with_whispers=owner)
    in_order = selectors.agents_in_order(room)
    agents = [
        {
            "id": a.pk,
            "name": a.name,
            "role": a.role,
            "participating": a.participating,
            "talkativeness": a.talkativeness,
            "system_prompt": a.system_prompt if owner else None,
        }
        for a in in_order
    ]
    up_next: tuple[int, ...] = ()
    if room.turn_order == Room.TurnOrder.PICK:
        up_next = q.upcoming(q.Queue.from_json(room.queue), queue_agents(in_order))
    return {
        **data,
        **_summary(request, room),
        "pause_reason": room.pause_reason,
        "response_delay": room.response_delay,
        "max_messages": room.max_messages,
        "max_wait": room.max_wait,
        "agents": agents,
        "up_next": list(up_next),
        "pending": [exports.message_entry(m) for m in pending],
        "share_url": request.build_absolute_uri(reverse("room_share", args=[room.share_token])) if owner else None,
    }


@router.post("/rooms", response={201: RoomOut, **refusals(403, 422)}, summary="Create a room")
def create_room(request: HttpRequest, body: RoomIn) -> Any:
    """The new-room form's rules and messages: personas (in the order they answer) or a template."""
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


def _refused(error: services.RoomError, field: str = "body") -> ApiError:
    return ApiError(422, str(error), errors=[{"field": field, "message": str(error)}])


def _changed(request: HttpRequest, room: Room) -> dict[str, Any]:
    # The room's open pages are told before the script is answered, as a click on the page tells them.
    broadcast.push_status(room)
    return room_out(request, room)


@router.post(
    "/rooms/{id:room_id}/say",
    response={201: RoomMessageOut, **refusals(403, 404, 422)},
    summary="Say something in a room",
)
def say(request: HttpRequest, room_id: int, body: SayIn) -> Any:
    """In manual mode, with no pending answers: every participating agent (those `to` names, for a whisper)
    then answers, as pending answers to keep or drop."""
    room = owned(Room, request, room_id)
    try:
        message = services.post_message(room, request.user.get_username(), body.text, body.to)
    except services.RoomError as error:
        raise _refused(error) from None
    work.start_round(room.pk)
    if not message.audience:  # a whisper is the owner's alone: never pushed to the room's viewers
        broadcast.push_messages(room, message)
    return 201, exports.message_entry(message)


@router.post(
    "/rooms/{id:room_id}/mode",
    response={200: RoomOut, **refusals(402, 403, 404, 422)},
    summary="Start or stop a room's auto mode",
)
def set_mode(request: HttpRequest, room_id: int, body: ModeIn) -> Any:
    """`auto`: the agents talk by themselves (the per-user limit of rooms in auto mode applies, 429); `manual`:
    auto mode stops and the answer being written is dropped. Asking for the mode the room is in changes nothing."""
    room = owned(Room, request, room_id)
    if body.mode == room.mode:
        return room_out(request, room)
    try:
        if body.mode == Room.Mode.AUTO:
            with limits.starting(request.user):
                room_limits.check_auto(request.user, room)
                note = services.set_mode(room, body.mode)
            work.start_auto(room.pk)
        else:
            note = services.set_mode(room, body.mode)
            work.stop(room.pk)
            broadcast.push_stopped(room)
    except costs.OverBudget as error:
        raise ApiError(402, str(error)) from None
    except services.RoomError as error:
        raise _refused(error, "mode") from None
    broadcast.push_messages(room, note)
    return _changed(request, room)


@router.post(
    "/rooms/{id:room_id}/interrupt",
    response={200: RoomOut, **refusals(403, 404, 422)},
    summary="Take the floor in auto mode",
)
def interrupt(request: HttpRequest, room_id: int) -> Any:
    """Auto mode stops at once; the answer being written is kept, inactive and marked interrupted."""
    room = owned(Room, request, room_id)
    try:
        note = services.interrupt(room)
    except services.RoomError as error:
        raise _refused(error) from None
    work.stop(room.pk)
    broadcast.push_stopped(room)
    broadcast.push_messages(room, note)
    return _changed(request, room)


@router.post(
    "/rooms/{id:room_id}/keep",
    response={200: RoomOut, **refusals(403, 404, 422)},
    summary="Keep or drop the pending answers",
)
def keep(request: HttpRequest, room_id: int, body: KeepIn) -> Any:
    """The pending answers named in `keep` join the history; the others join it inactive (the agents do not see
    them), shown faded. An id that names no pending answer keeps nothing, as on the page."""
    room = owned(Room, request, room_id)
    kept = services.submit_pending(room, set(body.keep))
    broadcast.push_kept(room, kept)
    return _changed(request, room)


@router.post(
    "/rooms/{id:room_id}/agents",
    response={201: RoomAgentOut, **refusals(403, 404, 422)},
    summary="Add an agent to a room",
)
def add_agent(request: HttpRequest, room_id: int, body: AgentIn) -> Any:
    """A persona joins; it sees what is said from now on."""
    room = owned(Room, request, room_id)
    persona = Persona.objects.filter(pk=body.persona).first()
    if persona is None:
        message = "There is no such persona; GET /personas lists them."
        raise ApiError(422, message, errors=[{"field": "persona", "message": message}])
    try:
        agent, note = services.add_agent(room, persona)
    except services.RoomError as error:
        raise _refused(error, "persona") from None
    broadcast.push_messages(room, note)
    broadcast.push_status(room)
    return 201, _agent(agent)


def _agent(agent: RoomAgent) -> dict[str, Any]:
    """An agent as its owner sees it (only the owner gets these answers)."""
    fields = ("name", "role", "participating", "talkativeness")
    return {"id": agent.pk, **{f: getattr(agent, f) for f in fields}, "system_prompt": agent.system_prompt}


def _room_agent(request: HttpRequest, room_id: int, agent_id: int) -> tuple[Room, RoomAgent]:
    room = owned(Room, request, room_id)
    return room, get_object_or_404(RoomAgent, pk=agent_id, room=room)


def _act(
    request: HttpRequest, room_id: int, agent_id: int, service: Callable[[Room, RoomAgent], None]
) -> dict[str, Any]:
    """An owner's action on one agent, as the page's `_agent_action` does it (rooms/views.py), so that the page
    and a script are refused alike and the room's open pages see the same status."""
    room, agent = _room_agent(request, room_id, agent_id)
    try:
        service(room, agent)
    except services.RoomError as error:
        raise _refused(error) from None
    return _changed(request, room)


@router.patch(
    "/rooms/{id:room_id}/agents/{id:agent_id}",
    response={200: RoomAgentOut, **refusals(403, 404, 422)},
    summary="Pause or resume an agent",
)
def change_agent(request: HttpRequest, room_id: int, agent_id: int, body: AgentChange) -> Any:
    """A paused agent (`participating: false`) is not asked until it is resumed."""
    room, agent = _room_agent(request, room_id, agent_id)
    if agent.participating != body.participating:
        services.toggle_participation(agent)
        broadcast.push_status(room)
    return _agent(agent)


@router.delete(
    "/rooms/{id:room_id}/agents/{id:agent_id}",
    response={204: None, **refusals(403, 404)},
    summary="Remove an agent from a room",
)
def remove_agent(request: HttpRequest, room_id: int, agent_id: int) -> Any:
    """It leaves; its messages stay."""
    room, agent = _room_agent(request, room_id, agent_id)
    broadcast.push_messages(room, services.remove_agent(room, agent))
    broadcast.push_status(room)
    return 204, None


def _form_errors(form: Any, what: str) -> ApiError:
    errors = [{"field": name, "message": str(m)} for name, messages in form.errors.items() for m in messages]
    return ApiError(422, f"The {what} cannot be set; each problem is listed in `errors`.", errors=errors)


@router.put(
    "/rooms/{id:room_id}/settings",
    response={200: RoomOut, **refusals(403, 404, 422)},
    summary="Set a room's auto mode settings",
)
def set_settings(request: HttpRequest, room_id: int, body: SettingsIn) -> Any:
    """The settings form's rules and messages: the pause between messages, the message limit, the wait."""
    room = owned(Room, request, room_id)
    form = SettingsForm({name: str(value) for name, value in body.dict().items()}, instance=room)
    if not form.is_valid():
        raise _form_errors(form, "settings")
    form.save()
    return room_out(request, room)


@router.put(
    "/rooms/{id:room_id}/turn-order",
    response={200: RoomOut, **refusals(403, 404, 422)},
    summary="Set a room's turn order",
)
def set_turn_order(request: HttpRequest, room_id: int, body: TurnOrderIn) -> Any:
    """Round robin, a selector model that picks, or pick (you name who is next: `.../agents/{id}/next`). The
    turn-order form's rules and messages."""
    room = owned(Room, request, room_id)
    candidates = body.candidates if body.candidates is not None else list(room.agents.values_list("pk", flat=True))
    data: dict[str, Any] = {"turn_order": body.turn_order, "candidates": [str(c) for c in candidates]}
    if body.selector is not None:
        data["selector"] = str(body.selector)
    if body.selector_repeat:
        data["selector_repeat"] = "on"
    form = TurnOrderForm(data, instance=room)
    if not form.is_valid():
        raise _form_errors(form, "turn order")
    cleaned = form.cleaned_data
    chosen = {a.pk for a in cleaned["candidates"]}
    services.set_turn_order(room, cleaned["turn_order"], cleaned["selector"], cleaned["selector_repeat"], chosen)
    return _changed(request, room)


@router.post(
    "/rooms/{id:room_id}/agents/{id:agent_id}/next",
    response={200: RoomOut, **refusals(403, 404, 422)},
    summary="Pick who speaks next",
)
def speak_next(request: HttpRequest, room_id: int, agent_id: int) -> Any:
    """Pick order only: the agent speaks next (after any @mentioned agents)."""
    return _act(request, room_id, agent_id, services.speak_next)


@router.post(
    "/rooms/{id:room_id}/agents/{id:agent_id}/earlier",
    response={200: RoomOut, **refusals(403, 404, 422)},
    summary="Move an agent one place earlier",
)
def move_earlier(request: HttpRequest, room_id: int, agent_id: int) -> Any:
    """Pick order only: the agent trades places with the one up just before it."""
    return _act(request, room_id, agent_id, services.move_earlier)
