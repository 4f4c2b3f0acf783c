"""Who may see and do what with a thing people share (a debate, a room, a tournament).

Every app's views and consumers ask here. Private: the owner (and staff). Unlisted: the owner,
staff, and anyone at the share link. Public: everyone.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from chaoslm import live
from chaoslm.http import message_reply


class Visibility(models.TextChoices):
    PRIVATE = "private", "private (only you)"
    UNLISTED = "unlisted", "unlisted (anyone with the link)"
    PUBLIC = "public", "public (listed on the home page)"


def new_share_token() -> str:
    return secrets.token_urlsafe(24)


class Shared(Protocol):
    """What sharing needs of a thing people share."""

    owner_id: Any
    visibility: str
    share_token: str


S = TypeVar("S", bound=models.Model)


def is_owner(user: Any, thing: Shared) -> bool:
    return bool(user.is_authenticated and thing.owner_id == user.pk)


def can_view(user: Any, thing: Shared) -> bool:
    """At the thing's own address: the owner, staff, or anyone when it is public."""
    return thing.visibility == Visibility.PUBLIC or is_owner(user, thing) or bool(user.is_staff)


def can_view_shared(thing: Shared, token: str) -> bool:
    """At its share link: anyone holding the token, unless the owner made it private."""
    return thing.visibility != Visibility.PRIVATE and secrets.compare_digest(token, thing.share_token)


class SharedModel(Shared, Protocol):
    """A saved thing people share: a debate, a room, a tournament."""

    pk: Any
    _meta: Any

    def save(self, *, update_fields: list[str]) -> None: ...


def reset_share_link(thing: SharedModel) -> None:
    """Give `thing` a new share token; sockets opened through the old link close."""
    old = thing.share_token
    thing.share_token = new_share_token()
    thing.save(update_fields=["share_token", "updated_at"])
    live.close_sync(live.share_group(old))


def public_group(thing: SharedModel) -> str:
    """The sockets at `thing`'s own address whose viewers see it only because it is public (not its owner,
    not staff): closed together when it stops being public."""
    return f"public-{thing._meta.label_lower}-{thing.pk}"


def sees_only_while_public(user: Any, thing: Shared, token: str | None) -> bool:
    """Whether a viewer `can_view` lets in at the thing's own address loses it when it stops being public."""
    return token is None and not is_owner(user, thing) and not user.is_staff


def set_visibility(thing: SharedModel, value: str) -> None:
    """Save `thing`'s new visibility (ValueError if unknown); sockets whose viewers may no longer see it close.

    Made private: those opened through its share link. No longer public: those of viewers at its own address
    who are neither its owner nor staff (`public_group`), and its share link is replaced, because while it
    was public every viewer could copy it. The owner's and staff's pages stay live.
    """
    if value not in Visibility.values:
        raise ValueError("Unknown visibility.")
    was = thing.visibility
    thing.visibility = value
    thing.save(update_fields=["visibility", "updated_at"])
    if was == Visibility.PUBLIC and value != Visibility.PUBLIC:
        reset_share_link(thing)
        live.close_sync(public_group(thing))
    elif value == Visibility.PRIVATE and was != Visibility.PRIVATE:
        live.close_sync(live.share_group(thing.share_token))


def can_delete(user: Any, thing: Shared) -> bool:
    return is_owner(user, thing) or bool(user.is_staff)


def find_visible(model: type[S], user: Any, pk: int | None = None, token: str | None = None) -> S | None:
    """The thing at an address (by id, or by share token) if `user` may see it there, else None."""
    found = model.objects.filter(pk=pk).first() if pk is not None else model.objects.filter(share_token=token).first()
    if found is None:
        return None
    allowed = can_view(user, found) if token is None else can_view_shared(found, token or "")
    return found if allowed else None


def visible_or_404(model: type[S], user: Any, pk: int | None = None, token: str | None = None) -> S:
    """`find_visible`, for views: a stranger gets the same 404 whether or not the thing exists."""
    found = find_visible(model, user, pk, token)
    if found is None:
        raise Http404(f"No such {model._meta.verbose_name}.")
    return found


def can_manage_sharing(user: Any, thing: Shared, *, staff: bool = False) -> bool:
    """Who changes a thing's visibility and share link: its owner; with `staff`, staff too (a batch made on the
    command line may have no owner who could)."""
    return is_owner(user, thing) or (staff and bool(user.is_staff))


def owner_action(
    model: type[S], *, staff: bool = False
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A POST view only the owner may use: `view(request, thing, **kwargs)` behind `wrapped(request, pk, **kwargs)`.

    The anonymous are sent to log in (302); those who may not see the thing get the same 404 as for one
    that does not exist; those who may see it but do not own it get 403 (staff too, unless `staff`).
    """
    noun = model._meta.verbose_name

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @require_POST
        @functools.wraps(view)
        def wrapped(request: HttpRequest, pk: int, **kwargs: Any) -> HttpResponse:
            thing = visible_or_404(model, request.user, pk=pk)
            if not can_manage_sharing(request.user, thing, staff=staff):
                return HttpResponseForbidden(f"Only the {noun}'s owner can do that.")
            return view(request, thing, **kwargs)

        return wrapped

    return decorate


# The owner's sharing controls, one set for every kind of shared thing. Each kind names its pages
# `<name>_detail`, `<name>_share`, `<name>_visibility` and `<name>_share_reset`, `<name>` being its model's.


def _names(model: type[models.Model]) -> str:
    return model._meta.model_name or ""


def share_panel(request: HttpRequest, thing: models.Model, *, staff: bool = False) -> dict[str, Any]:
    """What templates/partials/share_panel.html needs for `thing`, as `request.user` may see it.

    The share link is the owner's to hand out: nobody else is shown it, so a viewer of a public page
    cannot keep a way in after the owner makes it unlisted.
    """
    name = _names(type(thing))
    owner = can_manage_sharing(request.user, thing, staff=staff)  # type: ignore[arg-type]
    link = reverse(f"{name}_share", args=[thing.share_token])
    return {
        "thing": thing,
        "is_owner": owner,
        "via_link": request.path == link,
        "share_url": request.build_absolute_uri(link) if owner else "",
        "reset_url": reverse(f"{name}_share_reset", args=[thing.pk]),
        "visibility_url": reverse(f"{name}_visibility", args=[thing.pk]),
        "visibility_choices": Visibility.choices,
    }


def visibility_view(
    model: type[S], apply: Callable[[S, str], None] = set_visibility, *, staff: bool = False
) -> Callable[..., HttpResponse]:
    """The owner's (with `staff`, staff's too) POST that changes who may see a `model` (`apply`: `set_visibility`,
    or a kind's own that calls it), then back to its page with a message."""
    noun, name = model._meta.verbose_name, _names(model)

    @owner_action(model, staff=staff)
    def view(request: HttpRequest, thing: S) -> HttpResponse:
        try:
            apply(thing, request.POST.get("visibility", ""))
        except ValueError as error:
            return message_reply(str(error), 400)
        messages.success(request, f"This {noun} is now {thing.get_visibility_display()}.")  # type: ignore[attr-defined]
        return redirect(f"{name}_detail", thing.pk)

    return view


def share_reset_view(model: type[S], *, staff: bool = False) -> Callable[..., HttpResponse]:
    """The owner's (with `staff`, staff's too) POST that gives a `model` a new share link; the old one stops
    working."""
    noun, name = model._meta.verbose_name, _names(model)

    @owner_action(model, staff=staff)
    def view(request: HttpRequest, thing: S) -> HttpResponse:
        reset_share_link(thing)  # type: ignore[arg-type]
        messages.success(request, f"This {noun} has a new share link; the old one no longer works.")
        return redirect(f"{name}_detail", thing.pk)

    return view
