"""Prometheus metrics at `/metrics` (prometheus_client's text format), for the operator's scraper only.

Each process counts what it does: a web process its requests, spectators and pushes, and the model calls of the
work it runs inline; a Celery worker the model calls of its tasks (it serves its own `/metrics` on
`CHAOSLM_WORKER_METRICS_PORT` when that is set). Scrape every process, as Prometheus does with a target each.
What the database knows (debates by status, batches' progress) and the runner's queue are read when scraped, by
the sources the apps register (`register_source`), so every process answers the same there.

`/metrics` answers only clients at `CHAOSLM_METRICS_ALLOW` addresses (default: loopback), or any client sending
`Authorization: Bearer <CHAOSLM_METRICS_TOKEN>` when a token is set: a model's name, the numbers of debates and
their owners' traffic are the operator's business, not the internet's.

Request metrics are an ASGI middleware of a few lines (`RequestMetrics`) rather than django-prometheus: its
middleware is Django's `MiddlewareMixin`, which under ASGI runs each hook in a worker thread, a thread hop for
every request of the site.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import ipaddress
import time
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse
from prometheus_client import REGISTRY, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from chaoslm import metrics_sources

# Model calls take from a fraction of a second (a test server) to minutes (a slow local model writing a long reply).
CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320)
FIRST_TOKEN_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
PUSH_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

requests = Counter("chaoslm_http_requests", "HTTP requests answered, by method and status", ["method", "status"])
request_seconds = Histogram(
    "chaoslm_http_request_seconds", "Time to answer an HTTP request", ["method"], buckets=REQUEST_BUCKETS
)
model_calls = Counter(
    "chaoslm_model_calls",
    "Model calls by provider, model and outcome (ok, timeout, rate_limited, unavailable, refused, bad_response)",
    ["provider", "model", "outcome"],
)
model_call_seconds = Histogram(
    "chaoslm_model_call_seconds",
    "A model call's whole time, retries included",
    ["provider", "model"],
    buckets=CALL_BUCKETS,
)
model_first_token_seconds = Histogram(
    "chaoslm_model_first_token_seconds",
    "Time from sending a streamed call to its first token",
    ["provider", "model"],
    buckets=FIRST_TOKEN_BUCKETS,
)
model_tokens = Counter(
    "chaoslm_model_tokens", "Tokens as the provider reported them (input, output)", ["provider", "model", "kind"]
)
model_cost = Counter(
    "chaoslm_model_cost_dollars",
    "What the calls cost at their prices (chaoslm/llm/prices.py); calls of unknown price are not in it",
    ["provider", "model"],
)
model_unpriced_calls = Counter(
    "chaoslm_model_unpriced_calls", "Calls whose price is unknown (so not in the cost)", ["provider", "model"]
)
spectators = Gauge("chaoslm_live_sockets", "Live pages' websockets open on this process")
push_lag_seconds = Histogram(
    "chaoslm_live_push_lag_seconds",
    "From a push leaving its outbox to this web process forwarding it to its first socket",
    buckets=PUSH_BUCKETS,
)

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
OUTCOMES = {
    "LLMTimeout": "timeout",
    "LLMRateLimited": "rate_limited",
    "LLMUnavailable": "unavailable",
    "LLMConfigError": "refused",
    "LLMBadResponse": "bad_response",
}


def record_call(
    provider: str,
    model: str,
    outcome: str,
    seconds: float,
    first_token: float | None = None,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cached_tokens: int = 0,
    cost: Decimal | None = None,
) -> None:
    """One model call, as the gateway saw it; `cost` None for a failed call or an unknown price."""
    _child(model_calls, provider, model, outcome).inc()
    _child(model_call_seconds, provider, model).observe(seconds)
    if first_token is not None:
        _child(model_first_token_seconds, provider, model).observe(first_token)
    if input_tokens:
        _child(model_tokens, provider, model, "input").inc(input_tokens)
    if output_tokens:
        _child(model_tokens, provider, model, "output").inc(output_tokens)
    if cached_tokens:
        _child(model_tokens, provider, model, "cached_input").inc(cached_tokens)
    if outcome == "ok":
        if cost is None:
            _child(model_unpriced_calls, provider, model).inc()
        else:
            _child(model_cost, provider, model).inc(float(cost))


# A metric's `labels()` checks its values and looks the child up under a lock each time: each child is looked up once.
@functools.lru_cache(maxsize=8192)
def _child(metric: Any, *labels: str) -> Any:
    return metric.labels(*labels)


def outcome_of(error: BaseException) -> str:
    return OUTCOMES.get(type(error).__name__, "error")


_last_push: tuple[Any, Any] = (None, None)


def push_forwarded(message: dict[str, Any]) -> None:
    """A consumer is forwarding `message`: its lag is observed once per process (the first socket's), not once a
    socket, which at a thousand spectators would cost more than the forwarding."""
    global _last_push
    key = (message.get("source"), message.get("seq"))
    sent = message.get("sent")
    if sent is None or key == _last_push:
        return
    _last_push = key
    push_lag_seconds.observe(max(0.0, time.time() - sent))


# -- what is read when scraped -------------------------------------------------------------------------------


class _Sources(Collector):
    """The gauges registered in chaoslm/metrics_sources.py (the apps' rows, the runner's queue), read at each scrape."""

    def describe(self) -> Iterable[Metric]:
        return []  # read only when scraped, never at registration (it queries the database)

    def collect(self) -> Iterable[Metric]:
        for source in list(metrics_sources.sources):
            for reading in source():
                family = GaugeMetricFamily(reading.name, reading.help, labels=reading.labels)
                for labels, value in reading.rows:
                    family.add_metric(labels, value)
                yield family


REGISTRY.register(_Sources())


# -- exposition -----------------------------------------------------------------------------------------------


def _client(request: HttpRequest) -> str:
    from chaoslm.security import client_ip

    return client_ip(request)


def allowed(request: HttpRequest) -> bool:
    token = settings.CHAOSLM_METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        if hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return True
    try:
        address = ipaddress.ip_address(_client(request))
    except ValueError:
        return False
    return any(address in network for network in settings.CHAOSLM_METRICS_ALLOW_NETWORKS)


def _scrape() -> bytes:
    try:
        return generate_latest(REGISTRY)
    finally:
        close_old_connections()


async def metrics_view(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        return HttpResponse("Not found.\n", status=404, content_type="text/plain")
    # A thread: the sources read the database and Redis, synchronously.
    body = await asyncio.to_thread(_scrape)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


class RequestMetrics:
    """ASGI middleware: counts each HTTP request by method and status, and times it to its response's start."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        # Only the methods the site answers: a made-up method must not grow a series of its own.
        method = scope.get("method", "") if scope.get("method") in METHODS else "other"

        async def counted(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                requests.labels(method, str(message.get("status", 0))).inc()
                request_seconds.labels(method).observe(time.perf_counter() - started)
            await send(message)

        return await self.app(scope, receive, counted)


def serve_worker_metrics() -> None:
    """A Celery worker's own `/metrics` (prometheus_client's server), on `CHAOSLM_WORKER_METRICS_PORT` if set."""
    port = settings.CHAOSLM_WORKER_METRICS_PORT
    if port:
        from prometheus_client import start_http_server

        start_http_server(port, addr=settings.CHAOSLM_WORKER_METRICS_ADDR)
