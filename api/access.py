"""The sharing rules (chaoslm/sharing.py) as the API answers them: 404 for what the caller may not see, 403
for what it may see but not change. A read-only token changes nothing: api/main.py's `TokenAuth` refuses its
every write before the operation runs."""

from __future__ import annotations

from typing import TypeVar

from django.db import models
from django.http import HttpRequest

from api.problems import ApiError
from chaoslm import sharing

M = TypeVar("M", bound=models.Model)


def readable(model: type[M], request: HttpRequest, pk: int) -> M:
    """The thing if the token's user may see it at its own address (the page's rule), else a 404."""
    return sharing.visible_or_404(model, request.user, pk=pk)


def owned(model: type[M], request: HttpRequest, pk: int) -> M:
    """The thing for a change only its owner may make (`sharing.owner_action`'s rule)."""
    thing = readable(model, request, pk)
    if not sharing.is_owner(request.user, thing):  # type: ignore[arg-type]
        raise ApiError(403, f"Only the {model._meta.verbose_name}'s owner can do that.")
    return thing


def deletable(model: type[M], request: HttpRequest, pk: int) -> M:
    """The thing for a delete: its owner or staff (`sharing.can_delete`)."""
    thing = readable(model, request, pk)
    if not sharing.can_delete(request.user, thing):  # type: ignore[arg-type]
        raise ApiError(403, f"Only the {model._meta.verbose_name}'s owner can delete it.")
    return thing
