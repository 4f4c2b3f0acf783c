"""Personal API tokens: made, revoked, checked, and counted against the per-token rate limit."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from api.models import ApiToken, new_raw_token, token_digest
from chaoslm import limits

MAX_NAME_CHARS = 100
# Writing the last-used time on every call would make each read a write; a minute is precise enough to show.
LAST_USED_EVERY = timedelta(minutes=1)


def create_token(user: Any, name: str, *, read_only: bool) -> tuple[ApiToken, str]:
    """A new token for `user`, and its secret: shown once, never stored (ValueError on a bad name)."""
    name = name.strip()
    if not name:
        raise ValueError("Give the token a name, so you can tell it apart later.")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"A token's name may be at most {MAX_NAME_CHARS} characters; this one is {len(name)}.")
    raw = new_raw_token()
    token = ApiToken.objects.create(
        user=user, name=name, read_only=read_only, digest=token_digest(raw), prefix=raw[:12]
    )
    return token, raw


def revoke(token: ApiToken) -> None:
    """Refused from now on, also on an event stream already open (it checks at each tick)."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def authenticate(raw: str) -> ApiToken | None:
    """The active token whose secret is `raw`, its user loaded; None for anything else."""
    if not raw or len(raw) > 200:
        return None
    token = ApiToken.objects.select_related("user").filter(digest=token_digest(raw), revoked_at=None).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def still_active(token_id: int) -> bool:
    """Whether a token is still good: an open stream asks at each tick."""
    return ApiToken.objects.filter(pk=token_id, revoked_at=None, user__is_active=True).exists()


def retry_after(token: ApiToken) -> int | None:
    """Count one call against the token's rate limit: None if allowed, else the seconds until it may call again.

    At most CHAOSLM_API_CALLS_PER_MINUTE calls in any 60 seconds (a moving window, chaoslm/limits.py), counted in
    Redis when there is one, so every process counts together.
    """
    return limits.rate(f"api-rate:{token.pk}", settings.CHAOSLM_API_CALLS_PER_MINUTE)
