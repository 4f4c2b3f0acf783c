"""Room pages and actions: check access, call rooms.services or the runner, answer."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.contrib.messages import success as notify
from django.forms import BaseForm
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from chaoslm import costs, limits, sharing
from chaoslm.http import message_reply, parse_id
from personas.models import Persona
from rooms import broadcast, exports, selectors, services, work
from rooms import limits as room_limits
from rooms.forms import MemoryForm, NewRoomForm, SettingsForm, TurnOrderForm
from rooms.models import Room, RoomAgent, RoomMessage


@login_required
def room_list(request: HttpRequest) -> HttpResponse:
    form = NewRoomForm(request.POST or None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if data["template"] is not None:
            room = services.create_from_template(request.user, data["template"], data["title"], data["visibility"])
        else:
            room = services.create_room(request.user, data["title"], data["visibility"], data["personas"])
        return redirect("room_detail", room.pk)
    status = 422 if form.is_bound else 200  # refused: the form again, with what was ticked and why
    return render(request, "rooms/list.html", {"rooms": selectors.rooms_of(request.user), "form": form}, status=status)


def _page(request: HttpRequest, room: Room, ws_url: str, export_md: str) -> HttpResponse:
    owner = sharing.is_owner(request.user, room)
    messages, pending = selectors.page_messages(room, with_whispers=owner)
    status = selectors.room_status(room)
    return render(
        request,
        "rooms/detail.html",
        {
            **status,
            "oob": False,
            "messages_list": messages,
            "embedded_line": selectors.embedded_line(messages + pending),
            "pending": pending,
            "is_owner": owner,
            "can_delete": sharing.can_delete(request.user, room),
            "viewer": "owner" if owner else "stranger",
            "talk_rows": _talk_rows(status["agents"]),
            "personas": selectors.personas_to_add(room),
            "settings_form": SettingsForm(instance=room),
            "turn_order_form": TurnOrderForm(instance=room),
            "memory_form": MemoryForm(instance=room),
            "ws_url": ws_url,
            "since": _since(messages, pending),
            "share": sharing.share_panel(request, room),
            "export_md": export_md,
            "export_json": export_md.removesuffix("md") + "json",
            **selectors.usage(room),
        },
    )


def _since(messages: list[RoomMessage], pending: list[RoomMessage]) -> int:
    """What the page's socket catches up after (rooms/broadcast.catch_up_html), as static/js/chaoslm.js counts it."""
    since = messages[-1].pk if messages else 0
    return min(since, pending[0].pk - 1) if pending else since


def room_detail(request: HttpRequest, pk: int) -> HttpResponse:
    # A room left in auto mode by a restart is resumed by the sweep (rooms/work.py), not by a page view.
    room = sharing.visible_or_404(Room, request.user, pk=pk)
    return _page(request, room, f"/ws/rooms/{room.pk}/", reverse("room_export_md", args=[room.pk]))


def room_share(request: HttpRequest, token: str) -> HttpResponse:
    room = sharing.visible_or_404(Room, request.user, token=token)
    return _page(request, room, f"/ws/room-share/{token}/", reverse("room_share_export_md", args=[token]))


def _owner_action(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """`sharing.owner_action`, and a room error answered with its message (422)."""

    @sharing.owner_action(Room)
    @functools.wraps(view)
    def wrapped(request: HttpRequest, room: Room, **kwargs: object) -> HttpResponse:
        try:
            return view(request, room, **kwargs)
        except services.RoomError as error:
            return message_reply(str(error), 422)

    return wrapped


def _ids(values: list[str], refusal: str) -> list[int]:
    """The ids a form's boxes sent; one that is no id at all is refused (RoomError), never dropped: a whisper
    whose target is dropped would reach everyone."""
    ids = [parse_id(value) for value in values]
    if None in ids:
        raise services.RoomError(f"{refusal}: {values[ids.index(None)][:20]!r} is not one of them.")
    return [number for number in ids if number is not None]


EXPORTS: dict[str, tuple[Callable[..., str], str]] = {
    "md": (exports.as_markdown, "text/markdown; charset=utf-8"),
    "json": (exports.as_json, "application/json"),
}


def _export(room: Room, kind: str, *, private: bool) -> HttpResponse:
    render_as, content_type = EXPORTS[kind]  # the URL patterns admit only these
    response = HttpResponse(render_as(room, include_private=private), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="room-{int(room.pk)}.{kind}"'
    return response


def room_export(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    """Everything for the owner (whispers, system prompts); what the page shows them for anyone else."""
    room = sharing.visible_or_404(Room, request.user, pk=pk)
    return _export(room, kind, private=sharing.is_owner(request.user, room))


def room_share_export(request: HttpRequest, token: str, kind: str) -> HttpResponse:
    """Always what anyone may see: a share link is for passing on."""
    return _export(sharing.visible_or_404(Room, request.user, token=token), kind, private=False)


@_owner_action
def room_say(request: HttpRequest, room: Room) -> HttpResponse:
    to = _ids(request.POST.getlist("to"), "Whisper only to this room's agents")
    message = services.post_message(room, request.user.get_username(), request.POST.get("text", ""), to)
    work.start_round(room.pk)
    if message.audience:
        # A whisper is the owner's alone: it goes back to the page that sent it, never to the room's viewers.
        return HttpResponse(broadcast.message_card(message))
    broadcast.push_messages(room, message)
    return HttpResponse("")


@_owner_action
def room_mode(request: HttpRequest, room: Room) -> HttpResponse:
    mode = Room.Mode.AUTO if room.mode == Room.Mode.MANUAL else Room.Mode.MANUAL
    if mode == Room.Mode.AUTO:
        try:
            with limits.starting(request.user):
                room_limits.check_auto(request.user, room)
                note = services.set_mode(room, mode)
        except limits.LimitReached as error:
            return message_reply(str(error), 429)
        except costs.OverBudget as error:
            return message_reply(str(error), 402)
        work.start_auto(room.pk)
    else:
        note = services.set_mode(room, mode)
        # Stop halts the generation in progress at once; its partial text is not added.
        work.stop(room.pk)
        broadcast.push_stopped(room)
    broadcast.push_messages(room, note)
    broadcast.push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_interrupt(request: HttpRequest, room: Room) -> HttpResponse:
    note = services.interrupt(room)
    work.stop(room.pk)  # at once if it runs here; a worker's loop sees the mode change within CHAOSLM_ROOM_POLL
    broadcast.push_stopped(room)
    broadcast.push_messages(room, note)
    broadcast.push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_keep(request: HttpRequest, room: Room) -> HttpResponse:
    # An unreadable id keeps nothing it could name: the answers it does not name join faded, as unticked ones do.
    keep = {number for number in map(parse_id, request.POST.getlist("keep")) if number is not None}
    kept = services.submit_pending(room, keep)
    broadcast.push_kept(room, kept)
    broadcast.push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_toggle_message(request: HttpRequest, room: Room, message_id: int) -> HttpResponse:
    message = services.toggle_active(get_object_or_404(RoomMessage, pk=message_id, room=room))
    broadcast.push_messages(room, message)
    return HttpResponse(status=204)


@_owner_action
def room_add_agent(request: HttpRequest, room: Room) -> HttpResponse:
    persona_id = parse_id(request.POST.get("persona", ""))
    if persona_id is None:
        return message_reply("Choose a persona to add (its id, a whole number).", 400)
    persona = Persona.objects.filter(pk=persona_id).first()
    if persona is None:
        return message_reply("There is no such persona; reload the page to see the current list.", 422)
    _agent, note = services.add_agent(room, persona)
    broadcast.push_messages(room, note)
    broadcast.push_status(room)
    return redirect("room_detail", room.pk) if not request.htmx else HttpResponse(status=204)


def _agent_action(act: Callable[[HttpRequest, Room, RoomAgent], None]) -> Callable[..., HttpResponse]:
    """An owner's action on one agent of the room (a 404 for any other agent); the status line follows."""

    @_owner_action
    @functools.wraps(act)
    def view(request: HttpRequest, room: Room, agent_id: int) -> HttpResponse:
        act(request, room, get_object_or_404(RoomAgent, pk=agent_id, room=room))
        broadcast.push_status(room)
        return HttpResponse(status=204)

    return view


@_agent_action
def room_agent_pause(request: HttpRequest, room: Room, agent: RoomAgent) -> None:
    services.toggle_participation(agent)


@_agent_action
def room_agent_remove(request: HttpRequest, room: Room, agent: RoomAgent) -> None:
    broadcast.push_messages(room, services.remove_agent(room, agent))


@_agent_action
def room_agent_next(request: HttpRequest, room: Room, agent: RoomAgent) -> None:
    services.speak_next(room, agent)


@_agent_action
def room_agent_earlier(request: HttpRequest, room: Room, agent: RoomAgent) -> None:
    services.move_earlier(room, agent)


@_agent_action
def room_agent_retry(request: HttpRequest, room: Room, agent: RoomAgent) -> None:
    work.retry(room)


def _talk_rows(agents: list[RoomAgent], typed: dict[str, str] | None = None) -> list[tuple[RoomAgent, object, bool]]:
    """The talkativeness panel's rows: each agent, its talkativeness and whether it sees earlier messages, as
    saved or, for a refused Save, as typed."""
    if typed is None:
        return [(a, a.talkativeness, a.sees_earlier) for a in agents]
    return [(a, typed.get(f"talk-{a.pk}", a.talkativeness), f"earlier-{a.pk}" in typed) for a in agents]


def form_errors(form: BaseForm) -> str:
    """A refused form's errors on one line, for a reply with no form to show them in."""
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


def _panel(request: HttpRequest, room: Room, panel: str, status: int = 200, **context: object) -> HttpResponse:
    """A side panel drawn again for its HTMX Save: what was saved, or what was typed and why it was refused."""
    return render(request, f"rooms/partials/panel_{panel}.html", {"room": room, **context}, status=status)


def _saved(request: HttpRequest, room: Room, panel: str, note: str, **context: object) -> HttpResponse:
    if request.htmx:
        return _panel(request, room, panel, saved=note, **context)
    notify(request, note)
    return redirect("room_detail", room.pk)


def _refused(request: HttpRequest, room: Room, panel: str, error: str, **context: object) -> HttpResponse:
    if request.htmx:
        return _panel(request, room, panel, 422, error=error, **context)
    return message_reply(error, 422)


@_owner_action
def room_settings(request: HttpRequest, room: Room) -> HttpResponse:
    form = SettingsForm(request.POST, instance=room)
    if not form.is_valid():
        return _refused(request, room, "settings", form_errors(form), form=form)
    form.save()
    return _saved(request, room, "settings", "Auto mode settings saved.", form=SettingsForm(instance=room))


@_owner_action
def room_turn_order(request: HttpRequest, room: Room) -> HttpResponse:
    form = TurnOrderForm(request.POST, instance=room)
    if not form.is_valid():
        return _refused(request, room, "turn_order", form_errors(form), form=form)
    data = form.cleaned_data
    services.set_turn_order(
        room, data["turn_order"], data["selector"], data["selector_repeat"], {a.pk for a in data["candidates"]}
    )
    broadcast.push_status(room)  # who is up next, in pick mode
    note = f"Turn order: {room.get_turn_order_display()}."
    return _saved(request, room, "turn_order", note, form=TurnOrderForm(instance=room))


@_owner_action
def room_agent_settings(request: HttpRequest, room: Room) -> HttpResponse:
    agents = selectors.agents_in_order(room)
    try:
        services.set_agent_settings(room, request.POST.dict())
    except services.RoomError as error:
        return _refused(request, room, "talkativeness", str(error), rows=_talk_rows(agents, request.POST.dict()))
    broadcast.push_status(room)
    rows = _talk_rows(selectors.agents_in_order(room))
    return _saved(request, room, "talkativeness", "The agents' settings are saved.", rows=rows)


@_owner_action
def room_memory(request: HttpRequest, room: Room) -> HttpResponse:
    form = MemoryForm(request.POST, instance=room)
    if not form.is_valid():
        return _refused(request, room, "memory", form_errors(form), form=form)
    form.save()
    return _saved(request, room, "memory", f"Memory: {room.get_memory_display()}.", form=MemoryForm(instance=room))


@_owner_action
def room_save_template(request: HttpRequest, room: Room) -> HttpResponse:
    name = request.POST.get("name", "")
    try:
        template = services.save_template(room, name)
    except services.RoomError as error:
        return _refused(request, room, "template", str(error), name=name)
    note = f"Saved as the template “{template.name}”: choose it when you open a new room."
    return _saved(request, room, "template", note, name=template.name)


@login_required
@require_POST
def room_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """The owner's (or staff's) delete, its auto mode or round stopped first; then the room list."""
    room = sharing.visible_or_404(Room, request.user, pk=pk)
    if not sharing.can_delete(request.user, room):
        return HttpResponseForbidden("Only the room's owner can delete it.")
    work.delete(room)
    notify(request, "Room deleted, with its messages.")
    return redirect("room_list")


room_visibility = sharing.visibility_view(Room)
room_share_reset = sharing.share_reset_view(Room)
