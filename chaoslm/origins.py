"""Websockets only from the site's own pages: the rule Django's CSRF check applies to a POST's Origin.

Browsers send cookies with a websocket handshake from any page, and cookies are not scoped by port,
so an origin check that compares host names only (Channels' AllowedHostsOriginValidator) lets any
other web app on the same host read a user's private debates. The socket is accepted only when its
Origin is exactly the site's own (scheme, host and port, from the Host header, which must be an
allowed host) or one of CHAOSLM_CSRF_TRUSTED_ORIGINS (with Django's `https://*.example.com` form).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest
from django.utils.http import is_same_domain


class _HandshakeRequest(HttpRequest):
    """The handshake's headers as a Django request, so the host and scheme follow Django's own rules
    (ALLOWED_HOSTS, USE_X_FORWARDED_HOST, SECURE_PROXY_SSL_HEADER)."""

    def __init__(self, scope: dict[str, Any]) -> None:
        super().__init__()
        self._secure = scope.get("scheme") == "wss"
        for name, value in scope.get("headers", []):
            key = name.decode("latin-1").upper().replace("-", "_")
            self.META[f"HTTP_{key}"] = value.decode("latin-1")
        server = scope.get("server") or ("", "")
        self.META["SERVER_NAME"], self.META["SERVER_PORT"] = str(server[0] or ""), str(server[1] or "")

    def _get_scheme(self) -> str:
        return "https" if self._secure else "http"


def origin_allowed(scope: dict[str, Any]) -> bool:
    request = _HandshakeRequest(scope)
    origin = request.META.get("HTTP_ORIGIN")
    if not origin:
        return False  # browsers always send one; a client that does not is not a page of this site
    try:
        if origin == f"{request.scheme}://{request.get_host()}":
            return True
    except DisallowedHost:
        pass
    trusted = settings.CSRF_TRUSTED_ORIGINS
    if origin in (o for o in trusted if "*" not in o):
        return True
    try:
        parsed = urlsplit(origin)
    except ValueError:
        return False
    wildcards = (urlsplit(o) for o in trusted if "*" in o)
    return any(w.scheme == parsed.scheme and is_same_domain(parsed.netloc, w.netloc[1:]) for w in wildcards)


class SameOriginValidator:
    """ASGI middleware for websockets: refuse (403 at the handshake) any socket `origin_allowed` refuses."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
