"""What protects the site as a whole, beside the per-thing rules of chaoslm/sharing.py: who a client is for
login throttling (django-axes asks `client_ip`), and the request-body limit (`BodyLimit`, in front of Django).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def client_ip(request: HttpRequest) -> str:
    """The address failed logins are counted against.

    Behind a reverse proxy (CHAOSLM_BEHIND_PROXY) every request comes from the proxy, so the client is the
    last address in `X-Forwarded-For`: the one the proxy itself appended. Earlier entries are whatever the
    client sent, and a client could otherwise pick a fresh address for every guess.
    """
    if settings.CHAOSLM_BEHIND_PROXY:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if forwarded[-1]:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR", "")


def lockout_response(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """The page a throttled login gets (django-axes' AXES_LOCKOUT_CALLABLE): why, and how long to wait."""
    minutes = round(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    context = {"failure_limit": settings.AXES_FAILURE_LIMIT, "minutes": minutes}
    return render(request, "registration/locked_out.html", context, status=429)
