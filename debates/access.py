"""Who may see and do what with a debate or a room. Views and consumers both ask here."""

from __future__ import annotations

import secrets
from typing import Any, Protocol

from django.http import Http404

from debates.models import Debate


class Shared(Protocol):
    """What access needs of a thing people share: a debate or a room."""

    owner_id: Any
    visibility: str
    share_token: str


def is_owner(user: Any, debate: Shared) -> bool:
    return bool(user.is_authenticated and debate.owner_id == user.pk)


def can_view(user: Any, debate: Shared) -> bool:
    """At the debate's own address: the owner, staff, or anyone when it is public."""
    return debate.visibility == Debate.Visibility.PUBLIC or is_owner(user, debate) or bool(user.is_staff)


def can_view_shared(debate: Shared, token: str) -> bool:
    """At its share link: anyone holding the token, unless the owner made it private."""
    return debate.visibility != Debate.Visibility.PRIVATE and secrets.compare_digest(token, debate.share_token)


def can_delete(user: Any, debate: Shared) -> bool:
    return is_owner(user, debate) or bool(user.is_staff)


def find_visible(model: type[Any], user: Any, pk: int | None = None, token: str | None = None) -> Any | None:
    """The debate or room at an address (by id, or by share token) if `user` may see it there, else None."""
    found = model.objects.filter(pk=pk).first() if pk is not None else model.objects.filter(share_token=token).first()
    if found is None:
        return None
    allowed = can_view(user, found) if token is None else can_view_shared(found, token or "")
    return found if allowed else None


def visible_or_404(model: type[Any], user: Any, pk: int | None = None, token: str | None = None) -> Any:
    """`find_visible`, for views: a stranger gets the same 404 whether or not the thing exists."""
    found = find_visible(model, user, pk, token)
    if found is None:
        raise Http404(f"No such {model._meta.verbose_name}.")
    return found
