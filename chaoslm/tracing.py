"""OpenTelemetry traces, on when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (OTLP over HTTP, protobuf), else off.

A trace follows a debate from the request that starts it: the HTTP request's server span (`TraceRequests`,
outermost in config/asgi.py), the run of the debate (`span`, in the engine), each step, and each model call as a
GenAI client span under OpenTelemetry's semantic conventions (`gen_ai.*`, made in chaoslm/llm/gateway.py). The
context crosses to where the work runs: the inline runner's loop (`carry` at submit, `resumed` in the run) and
Celery tasks (opentelemetry-instrumentation-celery puts it in the task's headers; `run_on_process_loop` carries it
onto the worker's loop).

The official instrumentation of the `openai` client (opentelemetry-instrumentation-openai-v2) does not fit: it
wraps `chat.completions.create`, which the gateway does not call (it posts through the client's own `post`, for
the CPU; chaoslm/llm/gateway.py), so its spans would never start.

Off, nothing is imported and every hook is one test of a module global: bench/tracing.py measures CPU per model
call off, on, and without the hooks at all.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

_tracer: Any = None


def enabled() -> bool:
    return _tracer is not None


def setup(service: str) -> None:
    """Start exporting spans if `OTEL_EXPORTER_OTLP_ENDPOINT` is set (once a process): `service` names the process
    kind (web, worker, command) unless `OTEL_SERVICE_NAME` does."""
    global _tracer
    if _tracer is not None or not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME") or f"chaoslm-{service}"
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _tracer = trace.get_tracer("chaoslm")


def instrument_celery() -> None:
    """Carry the trace through Celery's task headers (the sender and the worker both call this)."""
    if _tracer is None:
        return
    from opentelemetry.instrumentation.celery import CeleryInstrumentor

    instrumentor = CeleryInstrumentor()
    if not instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.instrument()


def flush() -> None:
    """Send the spans still held (a command ends; a test waits for them)."""
    if _tracer is not None:
        from opentelemetry import trace

        trace.get_tracer_provider().force_flush()


@contextlib.contextmanager
def span(name: str, **attributes: Any) -> Iterator[None]:
    """A span around a block, the current one inside it (nothing at all when tracing is off)."""
    if _tracer is None:
        yield
        return
    with _tracer.start_as_current_span(name, attributes=attributes):
        yield


def carry() -> Any:
    """The current trace context, to resume where the work runs (None when tracing is off)."""
    if _tracer is None:
        return None
    from opentelemetry import context

    return context.get_current()


@contextlib.contextmanager
def resumed(carried: Any) -> Iterator[None]:
    """Make `carried` (from `carry`) the current context inside the block."""
    if carried is None:
        yield
        return
    from opentelemetry import context

    token = context.attach(carried)
    try:
        yield
    finally:
        context.detach(token)


def model_call_span(endpoint: Any, options: Any) -> Any:
    """A GenAI client span for one call (`chat {model}`), a child of the current span; ended by `end_model_call`."""
    from opentelemetry.trace import SpanKind

    where = urlsplit(endpoint.base_url)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",  # the protocol every endpoint speaks: OpenAI-compatible
        "gen_ai.request.model": endpoint.model,
        "server.address": where.hostname or "",
        "chaoslm.provider": endpoint.name,
    }
    if where.port:
        attributes["server.port"] = where.port
    if options.temperature is not None:
        attributes["gen_ai.request.temperature"] = options.temperature
    if options.max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = options.max_tokens
    return _tracer.start_span(f"chat {endpoint.model}", kind=SpanKind.CLIENT, attributes=attributes)


def end_model_call(span: Any, result: Any = None, error: BaseException | None = None) -> None:
    """End a span from `model_call_span` with the gateway's ChatResult, or the error the call ended with."""
    from opentelemetry.trace import Status, StatusCode

    if result is not None:
        span.set_attribute("gen_ai.response.model", result.model)
        if not result.usage_estimated:
            span.set_attribute("gen_ai.usage.input_tokens", result.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", result.completion_tokens)
    if error is not None:
        span.set_attribute("error.type", type(error).__name__)
        span.set_status(Status(StatusCode.ERROR, str(error)[:300]))
    span.end()


class TraceRequests:
    """ASGI middleware: a server span for each HTTP request (its parent from a `traceparent` header), when on."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if _tracer is None or scope["type"] != "http":
            return await self.app(scope, receive, send)
        from opentelemetry import propagate
        from opentelemetry.trace import SpanKind

        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())}
        method = scope.get("method", "")
        attributes = {"http.request.method": method, "url.path": scope.get("path", "")}
        with _tracer.start_as_current_span(
            f"{method} {scope.get('path', '')}",
            context=propagate.extract(headers),
            kind=SpanKind.SERVER,
            attributes=attributes,
        ) as server_span:

            async def traced(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    server_span.set_attribute("http.response.status_code", message.get("status", 0))
                await send(message)

            return await self.app(scope, receive, traced)
