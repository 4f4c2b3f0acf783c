"""A trace that crosses processes: a debate started through the API on a web process and run by a Celery worker,
both exporting to one OTLP/HTTP endpoint, is one trace. The task carries the request's trace in its headers
(opentelemetry-instrumentation-celery, in the web process that publishes and the worker that runs), so the
debate's run, its steps and its model calls hang under the request, across the broker."""

import time

import httpx2 as httpx
import pytest

from tests.core.test_tracing import Collector, attributes

pytestmark = pytest.mark.scaleout

TRACE_ID = "12" * 16
CALLER_SPAN = "34" * 8


def test_a_debate_started_on_a_web_process_and_run_by_a_celery_worker_is_one_trace(stack, _llm_server_process):
    collector = Collector()
    stack.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.url
    stack.env["OTEL_BSP_SCHEDULE_DELAY"] = "100"  # the batch processor's wait before it sends (ms)
    code = (
        "from django.contrib.auth.models import User; from api.tokens import create_token; "
        "print(create_token(User.objects.create_user('olive'), 'traces', read_only=False)[1])"
    )
    token = stack.manage("shell", "-c", code).stdout.strip().splitlines()[-1]
    stack.start_worker("traced")
    base = stack.start_web()
    client = httpx.Client(base_url=base + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=20)
    found = {p["name"]: p["id"] for p in client.get("/personas").json()}
    seats = {"a": found["Ada Sterling"], "b": found["Marcus Vale"], "judge": found["Judge Ines Okafor"]}
    body = {"topic": "Ban cars?", "premise": "Cities should ban cars", "seats": seats, "options": {"turns": 1}}
    reply = client.post("/debates", json=body, headers={"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01"})
    assert reply.status_code == 201, reply.text
    debate_id = reply.json()["id"]
    assert stack.wait_done(debate_id)["status"] == "completed"
    calls = len(_llm_server_process.requests)
    assert calls > 0

    named = lambda prefix: [s for _, s in collector.spans if s.name.startswith(prefix)]  # noqa: E731
    deadline = time.monotonic() + 30
    while len(named("chat ")) < calls or not named("debate run") or not named("POST /api/v1/debates"):
        assert time.monotonic() < deadline, [(service, s.name) for service, s in collector.spans]
        time.sleep(0.2)

    service_of = {span.span_id: service for service, span in collector.spans}
    spans = [span for _, span in collector.spans]
    by_id = {span.span_id: span for span in spans}

    def ancestors(span) -> list:
        chain = []
        while span.parent_span_id in by_id:
            span = by_id[span.parent_span_id]
            chain.append(span)
        return chain

    # The request, on the web process, continuing the caller's trace.
    (request,) = [s for s in spans if s.name == "POST /api/v1/debates"]
    assert request.trace_id.hex() == TRACE_ID and request.parent_span_id.hex() == CALLER_SPAN
    assert service_of[request.span_id] == "chaoslm-web"
    assert attributes(request)["http.response.status_code"] == 201
    # The task's publish under the request (web), its run under the publish (worker).
    (publish,) = [s for s in spans if s.name == "apply_async/debates.tasks.advance_debate"]
    assert request in ancestors(publish) and service_of[publish.span_id] == "chaoslm-web"
    assert publish.kind == publish.SPAN_KIND_PRODUCER
    (task,) = [s for s in spans if s.name == "run/debates.tasks.advance_debate"]
    assert task.parent_span_id == publish.span_id and service_of[task.span_id] == "chaoslm-worker"
    assert task.kind == task.SPAN_KIND_CONSUMER
    # The debate's run under the task, on the worker; its steps under it; each model call under its step.
    (run,) = [s for s in spans if s.name == "debate run"]
    assert run.parent_span_id == task.span_id and service_of[run.span_id] == "chaoslm-worker"
    assert attributes(run)["chaoslm.debate.id"] == debate_id
    steps = [s for s in spans if s.name.startswith("step ")]
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == calls == len(steps)
    assert all(step.parent_span_id == run.span_id for step in steps)
    assert {attributes(s)["chaoslm.seat"] for s in steps} == {"a", "b", "judge"}
    for chat in chats:
        assert by_id[chat.parent_span_id].name.startswith("step ")
        assert chat.kind == chat.SPAN_KIND_CLIENT and chat.name == "chat test-model"
        assert attributes(chat)["gen_ai.request.model"] == "test-model"
        assert service_of[chat.span_id] == "chaoslm-worker"
    # All of it one trace, the caller's, every span of it reaching up to the request; the only others are the
    # test's own reads (GET requests), each a trace of its own.
    for span in [publish, task, run, *steps, *chats]:
        assert span.trace_id.hex() == TRACE_ID and request in ancestors(span)
    others = [s for s in spans if s.trace_id.hex() != TRACE_ID]
    assert all(([s, *ancestors(s)][-1]).name.startswith("GET ") for s in others), [s.name for s in others]
