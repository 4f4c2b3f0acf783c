import gc
import os

from django.core.asgi import get_asgi_application
from django.urls import resolve

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from chaoslm import tracing  # noqa: E402
from chaoslm.consumers import NoteUnsentBytes  # noqa: E402
from chaoslm.live import RecordServingLoop  # noqa: E402
from chaoslm.llm.gateway import warm_up  # noqa: E402
from chaoslm.metrics import RequestMetrics  # noqa: E402
from chaoslm.origins import SameOriginValidator  # noqa: E402
from chaoslm.runner import sweep_when_serving  # noqa: E402
from chaoslm.security import BodyLimit, refuse_large_bodies_in_daphne  # noqa: E402
from chaoslm.tracing import TraceRequests  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402


def push_without_delay() -> None:
    """Turn off Nagle's algorithm on daphne's connections.

    Daphne leaves it on, so each small websocket push waits for the client's delayed ACK: about
    40 ms a token. Wrapping its factory is the one hook it offers for its sockets.
    """
    from daphne.http_protocol import HTTPFactory

    if getattr(HTTPFactory, "_chaoslm_nodelay", False):
        return
    build = HTTPFactory.buildProtocol

    def build_protocol(self, addr):  # type: ignore[no-untyped-def]
        protocol = build(self, addr)
        connection_made = protocol.connectionMade

        def made() -> None:
            connection_made()
            protocol.transport.setTcpNoDelay(True)

        protocol.connectionMade = made
        return protocol

    HTTPFactory.buildProtocol = build_protocol
    HTTPFactory._chaoslm_nodelay = True


def name_every_status() -> None:
    """Give Twisted (under daphne) the reason phrases it lacks, so a 422 goes out as "422 Unprocessable Entity",
    not "422 Unknown Status": Python's own table has every status the API sends."""
    from http import HTTPStatus

    from twisted.web import http

    for status in HTTPStatus:
        http.RESPONSES.setdefault(status.value, status.phrase.encode())


push_without_delay()
name_every_status()
tracing.setup("web")
if settings.CHAOSLM_RUNNER == "celery":
    tracing.instrument_celery()
refuse_large_bodies_in_daphne()
# Import the LLM client and load its TLS settings now, not on the event loop when the first debate starts.
warm_up()
# The same for the JSON API: its URL patterns are built on first use (api/urls.py) to keep django-ninja out of
# commands; a server builds them now, not on the event loop at its first API request.
resolve("/api/v1/")

application = RecordServingLoop(
    ProtocolTypeRouter(
        {
            "http": TraceRequests(RequestMetrics(BodyLimit(django_asgi_app))),
            "websocket": NoteUnsentBytes(SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))),
        }
    ),
    on_serving=sweep_when_serving,
)

# What is loaded by now (Django, the apps, the LLM client: most of the process's objects) lives as long
# as the process. Freezing it keeps the collector's full passes from scanning it all again and again:
# each pass stops every request and debate of this process, for 200-300 ms under load on two cores.
gc.freeze()
