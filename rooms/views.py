"""Room pages and actions: check access, call rooms.services or the runner, answer."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.contrib.messages import success as notify
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from chaoslm import limits, live, sharing
from chaoslm.http import message_reply, parse_id
from chaoslm.personas.models import Persona
from rooms import exports, selectors, services, work
from rooms import limits as room_limits
from rooms.broadcast import message_html
from rooms.forms import MemoryForm, NewRoomForm, SettingsForm, TurnOrderForm
from rooms.models import Room, RoomAgent, RoomMessage


def _push(room: Room, html: str) -> None:
    live.push_sync(live.room_group(room.pk), html)


def _push_status(room: Room) -> None:
    _push(room, selectors.room_status_html(room))


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
    messages, pending = selectors.page_messages(room, with_whispers=sharing.is_owner(request.user, room))
    return render(
        request,
        "rooms/detail.html",
        {
            **selectors.room_status(room),
            "oob": False,
            "messages_list": messages,
            "pending": pending,
            "is_owner": sharing.is_owner(request.user, room),
            "personas": selectors.personas_to_add(room),
            "settings_form": SettingsForm(instance=room),
            "turn_order_form": TurnOrderForm(instance=room),
            "memory_form": MemoryForm(instance=room),
            "ws_url": ws_url,
            "share": sharing.share_panel(request, room),
            "export_md": export_md,
            "export_json": export_md.removesuffix("md") + "json",
        },
    )


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
    card = live.upsert(message_html(message), "#messages")
    if message.audience:
        # A whisper is the owner's alone: it goes back to the page that sent it, never to the room's viewers.
        return HttpResponse(card)
    _push(room, card)
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
        work.start_auto(room.pk)
    else:
        note = services.set_mode(room, mode)
        # Stop halts the generation in progress at once; its partial text is not added.
        work.stop(room.pk)
        _push(room, "".join(live.remove(f"think-{a.pk}", "#pending") for a in room.agents.all()))
    if note is not None:
        _push(room, live.upsert(message_html(note), "#messages"))
    _push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_interrupt(request: HttpRequest, room: Room) -> HttpResponse:
    note = services.interrupt(room)
    work.stop(room.pk)  # at once if it runs here; a worker's loop sees the mode change within CHAOSLM_ROOM_POLL
    _push(room, "".join(live.remove(f"think-{a.pk}", "#pending") for a in room.agents.all()))
    _push(room, live.upsert(message_html(note), "#messages"))
    _push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_keep(request: HttpRequest, room: Room) -> HttpResponse:
    keep = set(_ids(request.POST.getlist("keep"), "Keep only the pending answers shown"))
    kept = services.submit_pending(room, keep)
    _push(
        room,
        "".join(live.remove(f"msg-{m.pk}", "#pending") + live.upsert(message_html(m), "#messages") for m in kept),
    )
    _push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_toggle_message(request: HttpRequest, room: Room, message_id: int) -> HttpResponse:
    message = services.toggle_active(get_object_or_404(RoomMessage, pk=message_id, room=room))
    _push(room, live.upsert(message_html(message), "#messages"))
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
    _push(room, live.upsert(message_html(note), "#messages"))
    _push_status(room)
    return redirect("room_detail", room.pk) if not request.htmx else HttpResponse(status=204)


@_owner_action
def room_agent(request: HttpRequest, room: Room, agent_id: int, what: str) -> HttpResponse:
    agent = get_object_or_404(RoomAgent, pk=agent_id, room=room)
    if what == "pause":
        services.toggle_participation(agent)
    elif what == "remove":
        _push(room, live.upsert(message_html(services.remove_agent(room, agent)), "#messages"))
    elif what == "next":
        services.speak_next(room, agent)
    elif what == "earlier":
        services.move_earlier(room, agent)
    elif what == "retry":
        if room.mode == Room.Mode.AUTO:
            work.start_auto(room.pk)
        else:
            work.start_round(room.pk)
    else:
        raise Http404
    _push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_settings(request: HttpRequest, room: Room) -> HttpResponse:
    form = SettingsForm(request.POST, instance=room)
    if not form.is_valid():
        return message_reply("; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()), 422)
    form.save()
    return redirect("room_detail", room.pk)


@_owner_action
def room_turn_order(request: HttpRequest, room: Room) -> HttpResponse:
    form = TurnOrderForm(request.POST, instance=room)
    if not form.is_valid():
        return message_reply("; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()), 422)
    data = form.cleaned_data
    services.set_turn_order(
        room, data["turn_order"], data["selector"], data["selector_repeat"], {a.pk for a in data["candidates"]}
    )
    notify(request, f"Turn order: {room.get_turn_order_display()}.")
    return redirect("room_detail", room.pk)


@_owner_action
def room_agent_settings(request: HttpRequest, room: Room) -> HttpResponse:
    services.set_agent_settings(room, request.POST.dict())
    _push_status(room)
    notify(request, "The agents' settings are saved.")
    return redirect("room_detail", room.pk)


@_owner_action
def room_memory(request: HttpRequest, room: Room) -> HttpResponse:
    form = MemoryForm(request.POST, instance=room)
    if not form.is_valid():
        return message_reply("; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()), 422)
    form.save()
    notify(request, f"Memory: {room.get_memory_display()}.")
    return redirect("room_detail", room.pk)


@_owner_action
def room_save_template(request: HttpRequest, room: Room) -> HttpResponse:
    template = services.save_template(room, request.POST.get("name", ""))
    notify(request, f"Saved as the template “{template.name}”: choose it when you open a new room.")
    return redirect("room_detail", room.pk)


room_visibility = sharing.visibility_view(Room)
room_share_reset = sharing.share_reset_view(Room)
