"""Health for load balancers and orchestrators: `/healthz` (this process answers) and `/readyz` (what it needs
answers: the database, the channel layer, Celery's workers where Celery runs the work, the model endpoint).

Both answer JSON. `/readyz` runs its checks at once, each given `CHAOSLM_HEALTH_TIMEOUT` seconds, and answers
503 naming each failing check and why, in words that carry no secret (no password, key or URL credentials).
A check still running from an earlier probe is not started again (a server that hangs would otherwise gather
a thread per probe); what a probe learned is reused for `REUSE_SECONDS`: a flood of probes costs nothing more.

The probes are answered by `ProbeMiddleware`, first in MIDDLEWARE: ahead of the host check (a Kubernetes probe
names the pod's address, not the site's host), the HTTPS redirect, sessions and the CSP, which a probe needs
none of. `/metrics` is answered there too (chaoslm/metrics.py).

django-health-check was considered: it answers JSON and checks the database and Celery, but not a channel
layer or a model endpoint, its checks run one after the other with no time limit of their own, and its
errors quote the underlying exception (a connection string may be in it). The four checks here are short.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import async_to_sync, iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse

REUSE_SECONDS = 1.0

Check = Callable[[], Awaitable[None]]


def _seconds() -> float:
    return settings.CHAOSLM_HEALTH_TIMEOUT


class CheckFailed(Exception):
    """A check's failure, in one sentence that names no secret."""


_CREDENTIALS = re.compile(r"(://)[^/@\s]+@|(password|passwd|pwd|token|key)=\S+", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` without URL credentials or key=value secrets, on one line."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return _CREDENTIALS.sub(lambda m: f"{m.group(1)}***@" if m.group(1) else f"{m.group(2)}=***", first)[:300]


def _where(url: str) -> str:
    """A URL's host and port only: enough to know which server, nothing to log in with."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def _database_sync() -> None:
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        connection.close()


async def check_database() -> None:
    try:
        # A thread of its own, not Django's one database thread: a probe must not queue behind the pages' queries.
        await asyncio.to_thread(_database_sync)
    except Exception as error:
        raise CheckFailed(f"the database did not answer: {redact(str(error)) or type(error).__name__}") from None


def _redis_sync() -> None:
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=_seconds(), socket_timeout=_seconds())
    try:
        client.ping()
    except Exception as error:
        raise CheckFailed(
            f"Redis (the channel layer) at {_where(settings.REDIS_URL)} did not answer: "
            f"{redact(str(error)) or type(error).__name__}"
        ) from None
    finally:
        client.close()


async def check_channel_layer() -> None:
    if not settings.REDIS_URL:
        return  # the embedded layer lives in this process: it answers when the process does
    await asyncio.to_thread(_redis_sync)


def _celery_ping() -> int:
    from chaoslm.runner import celery_app

    app = celery_app()
    # limit=1: the first worker's answer is enough; without it a ping waits out its whole timeout.
    return len(app.control.ping(timeout=_seconds() * 0.8, limit=1) or [])


async def check_celery() -> None:
    if settings.CHAOSLM_RUNNER != "celery":
        return
    try:
        workers = await asyncio.to_thread(_celery_ping)
    except Exception as error:
        raise CheckFailed(f"Celery's broker did not answer: {redact(str(error)) or type(error).__name__}") from None
    if not workers:
        raise CheckFailed(f"no Celery worker answered a ping within {_seconds() * 0.8:g}s")


def _model_sync() -> None:
    from urllib.error import HTTPError
    from urllib.request import ProxyHandler, Request, build_opener

    from chaoslm.llm.endpoints import default_endpoint
    from chaoslm.llm.proxies import proxy_for

    endpoint = default_endpoint()
    headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
    where = _where(endpoint.base_url)
    # urllib: a probe's one GET needs no pool, and the standard library's client is imported in milliseconds.
    # Through the proxy the gateway's calls go through (HTTP(S)_PROXY, NO_PROXY), or none if they go direct.
    parts = urlsplit(endpoint.base_url)
    if parts.scheme not in ("http", "https"):
        raise CheckFailed(f"the model endpoint's address is not http or https ({parts.scheme or 'none'})")
    netloc = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else str(parts.hostname)
    url = parts._replace(netloc=netloc + (f":{parts.port}" if parts.port else "")).geturl().rstrip("/") + "/models"
    proxy = proxy_for(parts.scheme, parts.hostname or "")
    opener = build_opener(ProxyHandler({parts.scheme: proxy} if proxy else {}))
    try:
        with opener.open(Request(url, headers=headers), timeout=_seconds()):  # noqa: S310 (http/https only)
            pass
    except HTTPError as error:
        if error.code in (401, 403):
            raise CheckFailed(f"the model endpoint at {where} refused the API key (HTTP {error.code})") from None
        if error.code >= 500:
            raise CheckFailed(f"the model endpoint at {where} answered HTTP {error.code}") from None
    except Exception as error:
        reason = getattr(error, "reason", None)
        detail = redact(str(reason)) if reason is not None else type(error).__name__
        raise CheckFailed(f"the model endpoint at {where} could not be reached ({detail})") from None


async def check_model() -> None:
    # A thread: the HTTP client's first import and its connection must not hold the loop that serves the pages.
    await asyncio.to_thread(_model_sync)


CHECKS: dict[str, Check] = {
    "database": check_database,
    "channel_layer": check_channel_layer,
    "celery": check_celery,
    "model": check_model,
}

_running: dict[str, asyncio.Task[None]] = {}
_last: tuple[float, dict[str, Any]] | None = None


async def _one(name: str, check: Check) -> dict[str, Any]:
    started = time.perf_counter()
    task = _running.get(name)
    # A task belongs to its loop: a test client's probe runs on a loop of its own (async_to_sync).
    if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
        task = _running[name] = asyncio.ensure_future(check())
    try:
        await asyncio.wait_for(asyncio.shield(task), _seconds())
    except TimeoutError:
        return {"ok": False, "reason": f"no answer within {_seconds():g}s"}
    except CheckFailed as failure:
        return {"ok": False, "reason": str(failure)}
    except Exception as error:  # a check's own bug still answers, as a failure that says what it was
        return {"ok": False, "reason": f"the check failed: {type(error).__name__}"}
    return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 1)}


async def readiness() -> dict[str, Any]:
    """Every check's result: {"status": "ok" | "failing", "checks": {name: {"ok", "ms" | "reason"}}}."""
    global _last
    now = time.monotonic()
    if _last is not None and now - _last[0] < REUSE_SECONDS:
        return _last[1]
    results = await asyncio.gather(*(_one(name, check) for name, check in CHECKS.items()))
    checks = dict(zip(CHECKS, results, strict=True))
    report = {"status": "ok" if all(c["ok"] for c in checks.values()) else "failing", "checks": checks}
    _last = (time.monotonic(), report)
    return report


def _json(body: dict[str, Any], status: int = 200) -> HttpResponse:
    response = HttpResponse(json.dumps(body), content_type="application/json", status=status)
    response["Cache-Control"] = "no-store"
    return response


async def healthz(request: HttpRequest) -> HttpResponse:
    return _json({"status": "ok"})


async def readyz(request: HttpRequest) -> HttpResponse:
    report = await readiness()
    return _json(report, 200 if report["status"] == "ok" else 503)


async def _metrics(request: HttpRequest) -> HttpResponse:
    from chaoslm.metrics import metrics_view

    return await metrics_view(request)


PROBES: dict[str, Callable[[HttpRequest], Awaitable[HttpResponse]]] = {
    "/healthz": healthz,
    "/readyz": readyz,
    "/metrics": _metrics,
}


class ProbeMiddleware:
    """Answers `PROBES` before any other middleware sees the request; passes everything else on."""

    async_capable = True
    sync_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        probe = PROBES.get(request.path)
        if self.is_async:
            return probe(request) if probe is not None else self.get_response(request)
        return async_to_sync(probe)(request) if probe is not None else self.get_response(request)
