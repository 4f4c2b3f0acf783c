"""The API tokens page over the API (accounts/views.py): your tokens, when each was last used, and revoking one. Making
a token stays on the page (a token cannot vouch for making another), the one page action with no API operation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from api import tokens
from api.models import ApiToken
from api.refusals import refusals

router = Router(tags=["account"])


class TokenOut(Schema):
    id: int
    name: str
    read_only: bool
    prefix: str = Field(description="The secret's first characters, to tell tokens apart; the rest is never shown")
    created_at: datetime
    last_used_at: datetime | None = Field(description="To the minute")
    revoked_at: datetime | None


def _token(token: ApiToken) -> dict[str, Any]:
    fields = ("name", "read_only", "prefix", "created_at", "last_used_at", "revoked_at")
    return {"id": token.pk, **{name: getattr(token, name) for name in fields}}


@router.get("/tokens", response={200: list[TokenOut], **refusals()}, summary="List your API tokens")
def list_tokens(request: HttpRequest) -> Any:
    """As your API tokens page lists them, revoked ones included."""
    return [_token(t) for t in ApiToken.objects.filter(user=request.user)]


@router.delete("/tokens/{id:token_id}", response={204: None, **refusals(403, 404)}, summary="Revoke an API token")
def revoke_token(request: HttpRequest, token_id: int) -> Any:
    """Refused from now on, its open event streams included (this token too, if it names itself). Another person's
    token is the same 404 as none at all."""
    tokens.revoke(get_object_or_404(ApiToken, pk=token_id, user=request.user))
    return 204, None
