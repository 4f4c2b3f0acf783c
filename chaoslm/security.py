"""What protects the site as a whole, beside the per-thing rules of chaoslm/sharing.py: who a client is for
login throttling (django-axes asks `client_ip`), and the request-body limit (`BodyLimit`, in front of Django).
"""

from __future__ import annotations

import json
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


# The request-body limit (CHAOSLM_MAX_REQUEST_BYTES). Two layers, because the web server reads before the
# application does: daphne (Twisted) buffers a whole request body, and parses a form body's fields, on the
# one thread that serves every page, before the application sees a byte. So `refuse_large_bodies_in_daphne`
# answers 413 there, from the headers; `BodyLimit` holds the same line for the application under any ASGI
# server; Django's DATA_UPLOAD_MAX_MEMORY_SIZE is the last.


def _size(count: int) -> str:
    for unit, size in (("MB", 1024 * 1024), ("KB", 1024)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"


def too_large_page(limit: int) -> bytes:
    """The 413 page: what was refused and what the site takes. Static: it is written before any view runs."""
    text = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too large · ChaosLM</title>'
        f'<link rel="stylesheet" href="/{settings.STATIC_URL.lstrip("/")}css/chaoslm.css"></head>'
        "<body><main><h1>That request is too large</h1>"
        f"<p>This site accepts at most {_size(limit)} in one request, so nothing was sent on or "
        "saved. Go back and send less: a tournament's questions file, for one, may be up to 1 MB.</p>"
        "</main></body></html>"
    )
    return text.encode()


# The JSON API's address: its clients read a 413 as a problem (RFC 9457), not a page.
API_PREFIX = "/api/"


def too_large(limit: int, path: str) -> tuple[str, bytes]:
    """The 413's content type and body for a request to `path`: the page, or a problem for the JSON API."""
    if not path.startswith(API_PREFIX):
        return "text/html; charset=utf-8", too_large_page(limit)
    detail = f"The request body is larger than this site accepts ({_size(limit)})."
    problem = {"type": "about:blank", "title": "Content too large", "status": 413, "detail": detail}
    return "application/problem+json", json.dumps(problem).encode()


def too_large_response(limit: int, path: str = "") -> bytes:
    """The whole HTTP/1.1 413 response, for writing straight to the socket."""
    content_type, body = too_large(limit, path)
    head = (
        f"HTTP/1.1 413 Content Too Large\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


class BodyLimit:
    """ASGI middleware: an HTTP request whose body is over `CHAOSLM_MAX_REQUEST_BYTES` gets a 413.

    With a `Content-Length` over the limit it is refused before a byte of the body is read; without one, the
    body is counted as it arrives and the application is told the client left once it passes the limit
    (Django then stops reading it), and the client gets the 413.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.CHAOSLM_MAX_REQUEST_BYTES
        declared = next((value for name, value in scope["headers"] if name == b"content-length"), None)
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await self.refuse(send, limit, scope.get("path", ""))
            return
        received = 0
        over = False
        started = False

        async def counted_receive() -> dict[str, Any]:
            nonlocal received, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    over = True
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted_receive, watched_send)
        if over and not started:
            await self.refuse(send, limit, scope.get("path", ""))

    @staticmethod
    async def refuse(send: Any, limit: int, path: str = "") -> None:
        content_type, body = too_large(limit, path)
        headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": [*headers, (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


class _Discard:
    """A refused request's body: read off the socket (so the client can read its 413) and dropped."""

    closed = False

    def write(self, data: bytes) -> int:
        return len(data)

    def tell(self) -> int:
        return 0

    def seek(self, *args: Any) -> int:
        return 0

    def read(self, *args: Any) -> bytes:
        return b""

    def close(self) -> None:
        pass


# A refused body is read and dropped up to this many times the limit, so that the client, still sending,
# reads the 413 rather than a reset connection; past that, or after DRAIN_SECONDS, the connection is cut.
DRAIN_FACTOR = 16
DRAIN_SECONDS = 10.0


def refuse_large_bodies_in_daphne() -> None:
    """Make daphne answer an oversized request with a 413 from its headers, and never parse form bodies.

    Twisted's request reads the whole body into memory or a temporary file, then (for a POST form) parses
    every field of it, multipart included, on the reactor thread that serves every other request and
    socket; only then does daphne hand the body to the application. A 30 MB upload stalled every page
    for seconds. Daphne never uses Twisted's parsed fields, so that parse is turned off; and a body over
    the limit is refused as soon as its length is known (`gotLength`) or, sent without one, as soon as it
    passes the limit (`handleContentChunk`). Patching its request class is the one hook daphne offers.
    """
    from daphne.http_protocol import WebRequest

    if getattr(WebRequest, "_chaoslm_body_limit", False):
        return
    init, got_length, handle_chunk, process = (
        WebRequest.__init__,
        WebRequest.gotLength,
        WebRequest.handleContentChunk,
        WebRequest.process,
    )

    def init_without_form_parsing(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self._parsePOSTFormSubmission = False
        self._chaoslm_received = 0
        self._chaoslm_refused = False

    def refuse(self: Any) -> None:
        # Imported here, once serving: importing the reactor earlier would install Twisted's default one
        # before daphne installs its asyncio reactor.
        from twisted.internet import reactor

        limit = settings.CHAOSLM_MAX_REQUEST_BYTES
        self._chaoslm_refused = True
        if getattr(self, "content", None) is not None:
            self.content.close()
        self.content = _Discard()
        transport = self.channel.transport
        # The request line is read before the headers: its path is known when the length is.
        path = getattr(self.channel, "_path", b"") or b""
        transport.write(too_large_response(limit, path.decode("latin-1")))

        def cut() -> None:
            if transport.connected:
                transport.abortConnection()

        self._chaoslm_drain = reactor.callLater(DRAIN_SECONDS, cut)

    def length_or_refuse(self: Any, length: int | None) -> None:
        limit = settings.CHAOSLM_MAX_REQUEST_BYTES
        if length is not None and length > limit:
            refuse(self)
            if length > DRAIN_FACTOR * limit:
                self.channel.transport.loseConnection()
            return
        got_length(self, length)

    def chunk_or_refuse(self: Any, data: bytes) -> None:
        self._chaoslm_received += len(data)
        limit = settings.CHAOSLM_MAX_REQUEST_BYTES
        if self._chaoslm_refused:
            if self._chaoslm_received > DRAIN_FACTOR * limit:
                self.channel.transport.loseConnection()
            return
        if self._chaoslm_received > limit:
            refuse(self)
            return
        handle_chunk(self, data)

    def process_unless_refused(self: Any) -> Any:
        if self._chaoslm_refused:
            # The whole refused body has been read: closing now sends no reset over the 413.
            if self._chaoslm_drain.active():
                self._chaoslm_drain.cancel()
            self.channel.transport.loseConnection()
            return None
        return process(self)

    WebRequest.__init__ = init_without_form_parsing
    WebRequest.gotLength = length_or_refuse
    WebRequest.handleContentChunk = chunk_or_refuse
    WebRequest.process = process_unless_refused
    WebRequest._chaoslm_body_limit = True
