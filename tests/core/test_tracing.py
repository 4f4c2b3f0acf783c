"""Traces as a collector receives them: a real ChaosLM server with OTEL_EXPORTER_OTLP_ENDPOINT pointed at an OTLP/HTTP
endpoint in this test (a loopback HTTP server, the protobuf parsed by opentelemetry-proto). A debate started through
the API is one trace: the request, the debate's run, each step, and each model call as a GenAI client span."""

import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.servers import manage, running_site


class Collector:
    """An OTLP/HTTP trace endpoint: every span it is sent, as (resource's service name, span)."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, object]] = []
        self.paths: list[str] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                collector.paths.append((self.path, self.headers["Content-Type"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                for resource_spans in request.resource_spans:
                    service = next(
                        a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"
                    )
                    for scope_spans in resource_spans.scope_spans:
                        collector.spans.extend((service, span) for span in scope_spans.spans)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def attributes(span) -> dict:
    out = {}
    for attribute in span.attributes:
        value = attribute.value
        out[attribute.key] = getattr(value, value.WhichOneof("value"))
    return out


def test_a_debate_started_through_the_api_is_one_trace_down_to_each_model_call(tmp_path, _llm_server_process):
    llm = _llm_server_process
    llm.reset()
    collector = Collector()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path}/site.sqlite3",
        "OPENAI_BASE_URL": llm.url,
        "OPENAI_API_KEY": "trace-test-key",
        "CHAOSLM_DEFAULT_MODEL": "test-model",
        "CHAOSLM_TRANSCRIPTS_DIR": str(tmp_path / "transcripts"),
        "CHAOSLM_LOG_LEVEL": "WARNING",
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # the batch processor's wait before it sends (ms)
    }
    manage(env, "migrate", "--noinput")
    manage(env, "import_personas", "personas/samples/")
    code = (
        "from django.contrib.auth.models import User; from api.tokens import create_token; "
        "print(create_token(User.objects.create_user('olive'), 'traces', read_only=False)[1])"
    )
    token = manage(env, "shell", "-c", code).strip().splitlines()[-1]
    with running_site(env, "tracing-server") as base:
        client = httpx.Client(base_url=base + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=20)
        found = {p["name"]: p["id"] for p in client.get("/personas").json()}
        seats = {"a": found["Ada Sterling"], "b": found["Marcus Vale"], "judge": found["Judge Ines Okafor"]}
        body = {"topic": "Ban cars?", "premise": "Cities should ban cars", "seats": seats, "options": {"turns": 1}}
        reply = client.post("/debates", json=body, headers={"traceparent": f"00-{'ab' * 16}-{'cd' * 8}-01"})
        assert reply.status_code == 201, reply.text
        debate_id = reply.json()["id"]
        deadline = time.monotonic() + 60
        while client.get(f"/debates/{debate_id}").json()["status"] != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        calls = len(llm.requests)
        deadline = time.monotonic() + 30
        named = lambda prefix: [s for _, s in collector.spans if s.name.startswith(prefix)]  # noqa: E731
        while len(named("chat ")) < calls or not named("debate run"):
            assert time.monotonic() < deadline, [s.name for _, s in collector.spans]
            time.sleep(0.2)

    assert set(collector.paths) == {("/v1/traces", "application/x-protobuf")}
    spans = [span for _, span in collector.spans]
    by_id = {span.span_id: span for span in spans}
    # The request that started it, continuing the caller's trace.
    (request,) = [s for s in spans if s.name == "POST /api/v1/debates"]
    assert request.trace_id.hex() == "ab" * 16 and request.parent_span_id.hex() == "cd" * 8
    assert request.kind == request.SPAN_KIND_SERVER
    assert attributes(request)["http.response.status_code"] == 201
    # The run, under the request, in the same trace.
    (run,) = [s for s in spans if s.name == "debate run"]
    assert run.parent_span_id == request.span_id and run.trace_id == request.trace_id
    assert attributes(run)["chaoslm.debate.id"] == debate_id
    # Each step under the run; each model call, a GenAI client span, under its step.
    steps = [s for s in spans if s.name.startswith("step ")]
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == calls == len(steps)
    assert all(step.parent_span_id == run.span_id for step in steps)
    for chat in chats:
        step = by_id[chat.parent_span_id]
        assert step.name.startswith("step ") and chat.trace_id == request.trace_id
        assert chat.kind == chat.SPAN_KIND_CLIENT
        seen = attributes(chat)
        assert chat.name == "chat test-model"
        assert seen["gen_ai.operation.name"] == "chat"
        assert seen["gen_ai.request.model"] == "test-model"
        assert seen["gen_ai.provider.name"] == "openai"
        assert seen["server.address"] == "127.0.0.1"
        assert seen["gen_ai.usage.input_tokens"] > 0 and seen["gen_ai.usage.output_tokens"] > 0
    assert {attributes(s)["chaoslm.seat"] for s in steps} == {"a", "b", "judge"}
    assert {service for service, _ in collector.spans} == {"chaoslm-web"}
    assert "trace-test-key" not in str(spans)


@pytest.mark.django_db
def test_tracing_off_imports_nothing_of_opentelemetry():
    from tests.servers import run_python

    code = (
        "import django, sys; django.setup(); import config.asgi; "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    assert run_python(code).stdout.strip() == "[]"
