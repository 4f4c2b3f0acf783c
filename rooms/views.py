"""Room pages and actions: check access, call rooms.actions or the engine, answer."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.messages import success as notify
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from chaoslm import limits, live
from chaoslm.http import message_reply, parse_id
from chaoslm.personas.models import Persona
from debates import access, runner
from rooms import actions
from rooms import limits as room_limits
from rooms.broadcast import message_html, status_context, status_html
from rooms.models import Room, RoomAgent, RoomMessage, new_share_token


class NewRoomForm(forms.Form):
    title = forms.CharField(max_length=200, widget=forms.TextInput(attrs={"placeholder": "A chat about cities"}))
    personas = forms.ModelMultipleChoiceField(
        queryset=Persona.objects.all(),
        widget=forms.CheckboxSelectMultiple,
        help_text="They answer in this order; you can add more later.",
    )
    visibility = forms.ChoiceField(choices=Room.Visibility.choices, initial=Room.Visibility.PRIVATE)


class SettingsForm(forms.ModelForm):
    class Meta:
        model = Room
        fields = ["response_delay", "max_messages", "max_wait"]


def _push(room: Room, html: str) -> None:
    live.push_sync(live.room_group(room.pk), html)


def _push_status(room: Room) -> None:
    room.refresh_from_db()
    _push(room, status_html(room))


@login_required
def room_list(request: HttpRequest) -> HttpResponse:
    form = NewRoomForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        room = Room.objects.create(
            title=form.cleaned_data["title"].strip() or "Room",
            owner=request.user,
            visibility=form.cleaned_data["visibility"],
        )
        for persona in form.cleaned_data["personas"]:
            actions.add_agent(room, persona)
        return redirect("room_detail", room.pk)
    rooms = Room.objects.filter(owner=request.user)
    return render(request, "rooms/list.html", {"rooms": rooms, "form": form})


def _page(request: HttpRequest, room: Room, ws_url: str) -> HttpResponse:
    is_owner = access.is_owner(request.user, room)
    messages = list(room.messages.select_related("agent"))
    return render(
        request,
        "rooms/detail.html",
        {
            **status_context(room),
            "oob": False,
            "messages_list": [m for m in messages if m.kind != RoomMessage.Kind.PENDING],
            "pending": [m for m in messages if m.kind == RoomMessage.Kind.PENDING],
            "is_owner": is_owner,
            "personas": Persona.objects.exclude(name__in=room.agents.values_list("name", flat=True)),
            "settings_form": SettingsForm(instance=room),
            "ws_url": ws_url,
            "share_url": request.build_absolute_uri(reverse("room_share", args=[room.share_token])),
        },
    )


def _visible_room(request: HttpRequest, pk: int) -> Room:
    return access.visible_or_404(Room, request.user, pk=pk)


def room_detail(request: HttpRequest, pk: int) -> HttpResponse:
    room = _visible_room(request, pk)
    if room.mode == Room.Mode.AUTO and access.is_owner(request.user, room):
        # After a server restart the room is still in auto mode, with no loop running: pick it up again.
        runner.start_room_auto(room.pk)
    return _page(request, room, f"/ws/rooms/{room.pk}/")


def room_share(request: HttpRequest, token: str) -> HttpResponse:
    room = access.visible_or_404(Room, request.user, token=token)
    return _page(request, room, f"/ws/room-share/{token}/")


def _owner_action(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @login_required
    @require_POST
    @functools.wraps(view)
    def wrapped(request: HttpRequest, pk: int, **kwargs: object) -> HttpResponse:
        room = _visible_room(request, pk)
        if not access.is_owner(request.user, room):
            return HttpResponseForbidden("Only the room's owner can do that.")
        try:
            return view(request, room, **kwargs)
        except actions.RoomError as error:
            return message_reply(str(error), 422)

    return wrapped


@_owner_action
def room_say(request: HttpRequest, room: Room) -> HttpResponse:
    message = actions.post_message(room, request.user.get_username(), request.POST.get("text", ""))
    _push(room, live.upsert(message_html(message), "#messages"))
    runner.start_room_round(room.pk)
    return HttpResponse("")


@_owner_action
def room_mode(request: HttpRequest, room: Room) -> HttpResponse:
    mode = Room.Mode.AUTO if room.mode == Room.Mode.MANUAL else Room.Mode.MANUAL
    if mode == Room.Mode.AUTO:
        try:
            with limits.starting(request.user):
                room_limits.check_auto(request.user, room)
                note = actions.set_mode(room, mode)
        except limits.LimitReached as error:
            return message_reply(str(error), 429)
        runner.start_room_auto(room.pk)
    else:
        note = actions.set_mode(room, mode)
        # Stop halts the generation in progress at once; its partial text is not added.
        runner.stop_room(room.pk)
        _push(room, "".join(live.remove(f"think-{a.pk}", "#pending") for a in room.agents.all()))
    if note is not None:
        _push(room, live.upsert(message_html(note), "#messages"))
    _push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_keep(request: HttpRequest, room: Room) -> HttpResponse:
    keep = {number for number in map(parse_id, request.POST.getlist("keep")) if number is not None}
    kept = actions.submit_pending(room, keep)
    _push(
        room,
        "".join(live.remove(f"msg-{m.pk}", "#pending") + live.upsert(message_html(m), "#messages") for m in kept),
    )
    _push_status(room)
    return HttpResponse(status=204)


@_owner_action
def room_toggle_message(request: HttpRequest, room: Room, message_id: int) -> HttpResponse:
    message = actions.toggle_active(get_object_or_404(RoomMessage, pk=message_id, room=room))
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
    _agent, note = actions.add_agent(room, persona)
    _push(room, live.upsert(message_html(note), "#messages"))
    _push_status(room)
    return redirect("room_detail", room.pk) if not request.htmx else HttpResponse(status=204)


@_owner_action
def room_agent(request: HttpRequest, room: Room, agent_id: int, what: str) -> HttpResponse:
    agent = get_object_or_404(RoomAgent, pk=agent_id, room=room)
    if what == "pause":
        actions.toggle_participation(agent)
    elif what == "remove":
        _push(room, live.upsert(message_html(actions.remove_agent(room, agent)), "#messages"))
    elif what == "retry":
        if room.mode == Room.Mode.AUTO:
            runner.start_room_auto(room.pk)
        else:
            runner.start_room_round(room.pk)
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
def room_share_reset(request: HttpRequest, room: Room) -> HttpResponse:
    """A new share link; the old one stops working."""
    old = room.share_token
    room.share_token = new_share_token()
    room.save(update_fields=["share_token", "updated_at"])
    live.close_sync(live.share_group(old))
    notify(request, "This room has a new share link; the old one no longer works.")
    return redirect("room_detail", room.pk)
