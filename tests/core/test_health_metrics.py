"""/metrics read as Prometheus reads it (prometheus_client's own text parser): the model calls a debate made
through the test server, their latency and tokens; the debates by status; and who may read it at all."""

import asyncio
import os
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from chaoslm.llm import Callbacks, chat
from chaoslm.llm.endpoints import default_endpoint
from debates.models import Debate, Event
from debates.setup import SeatChoice, create_debate
from personas.models import import_personas
from tests.servers import manage, running_site

pytestmark = pytest.mark.django_db(transaction=True)
PERSONAS = Path(__file__).resolve().parents[2] / "personas" / "samples"


def scrape(client, **extra) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", **extra)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples, name, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_a_debates_model_calls_show_in_the_counters_and_histograms(client, llm_server, run_to_rest):
    files = ["ada-sterling.yaml", "marcus-vale.yaml", "judge-okafor.yaml"]
    personas = {p.name: p for p in import_personas([(f, (PERSONAS / f).read_text()) for f in files])}
    seats = {k: SeatChoice(personas[n]) for k, n in [("a", "Ada Sterling"), ("b", "Marcus Vale")]}
    seats["judge"] = SeatChoice(personas["Judge Ines Okafor"])
    model = {"provider": "default", "model": "test-model"}
    before = scrape(client)

    debate = create_debate(format_name="duel", topic="Ban cars?", premise="Yes", seats=seats, options={"turns": 1})
    assert run_to_rest(debate.pk).status == Debate.Status.COMPLETED
    # And one call streamed, as for a page someone watches: its first token is timed.
    hello = [{"role": "user", "content": "hi"}]
    streamed = asyncio.run(chat(default_endpoint(), hello, callbacks=Callbacks(on_delta=lambda text: None)))
    assert not streamed.usage_estimated

    after = scrape(client)
    calls = len(llm_server.requests)
    assert calls > 3
    events = Event.objects.filter(debate=debate)
    assert (
        value(after, "chaoslm_model_calls_total", outcome="ok", **model)
        - value(before, "chaoslm_model_calls_total", outcome="ok", **model)
        == calls
    )
    assert (
        value(after, "chaoslm_model_call_seconds_count", **model)
        - value(before, "chaoslm_model_call_seconds_count", **model)
        == calls
    )
    assert value(after, "chaoslm_model_call_seconds_bucket", le="+Inf", **model) == value(
        after, "chaoslm_model_call_seconds_count", **model
    )
    assert (
        value(after, "chaoslm_model_first_token_seconds_count", **model)
        - value(before, "chaoslm_model_first_token_seconds_count", **model)
        == 1
    )
    # The tokens the test server reported: the debate's, as its events stored them, and the streamed call's.
    input_tokens = sum(e.tokens_in for e in events) + streamed.prompt_tokens
    output_tokens = sum(e.tokens_out for e in events) + streamed.completion_tokens
    grew = {
        kind: value(after, "chaoslm_model_tokens_total", kind=kind, **model)
        - value(before, "chaoslm_model_tokens_total", kind=kind, **model)
        for kind in ("input", "output")
    }
    assert grew == {"input": input_tokens, "output": output_tokens}
    # The test server's model has no known price: its calls are counted as unpriced, never as costing $0.
    assert (
        value(after, "chaoslm_model_unpriced_calls_total", **model)
        - value(before, "chaoslm_model_unpriced_calls_total", **model)
        == calls
    )
    assert value(after, "chaoslm_model_cost_dollars_total", **model) == 0
    assert value(after, "chaoslm_debates", status="completed") == 1
    assert value(after, "chaoslm_runner_queue_depth", runner="inline") == 0


def test_a_failed_call_counts_by_its_outcome(client, llm_server, settings):
    llm_server.configure(rules=[{"match": "", "fault": "500"}])
    settings.CHAOSLM_LLM_MAX_RETRIES = 0
    model = {"provider": "default", "model": "test-model"}
    before = value(scrape(client), "chaoslm_model_calls_total", outcome="unavailable", **model)
    with pytest.raises(Exception, match="HTTP 500"):
        asyncio.run(chat(default_endpoint(), [{"role": "user", "content": "hi"}]))
    assert value(scrape(client), "chaoslm_model_calls_total", outcome="unavailable", **model) == before + 1


def test_metrics_are_not_for_the_internet(client, settings):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 404
    settings.CHAOSLM_METRICS_TOKEN = "scrape-token"
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 404
    wrong = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 404
    right = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer scrape-token")
    assert right.status_code == 200
    # Behind a proxy, the proxy's loopback address is not the client's.
    settings.CHAOSLM_BEHIND_PROXY = True
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 404


def parse(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_a_served_site_counts_its_requests_and_answers_probes_first(tmp_path, _llm_server_process):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path}/site.sqlite3",
        "OPENAI_BASE_URL": _llm_server_process.url,
        "CHAOSLM_LOG_LEVEL": "WARNING",
        # As in production: the site's host only, and HTTPS; a probe names neither.
        "CHAOSLM_DEBUG": "false",
        "CHAOSLM_SECRET_KEY": "metrics-test-key",
        "CHAOSLM_ALLOWED_HOSTS": "127.0.0.1",
        "CHAOSLM_SSL_REDIRECT": "false",
        "CHAOSLM_SECURE_COOKIES": "false",
    }
    manage(env, "migrate", "--noinput")
    with running_site(env, "metrics-server") as base:
        assert httpx.get(base + "/", timeout=10).status_code == 200
        assert httpx.get(base + "/no-such-page/", timeout=10).status_code == 404
        probe = httpx.get(base + "/healthz", headers={"Host": "10.0.0.7:8000"}, timeout=10)
        assert probe.status_code == 200 and probe.json() == {"status": "ok"}
        samples = parse(httpx.get(base + "/metrics", timeout=10).text)
    assert value(samples, "chaoslm_http_requests_total", method="GET", status="200") >= 2
    assert value(samples, "chaoslm_http_requests_total", method="GET", status="404") == 1
    assert value(samples, "chaoslm_http_request_seconds_count", method="GET") >= 3
    assert value(samples, "chaoslm_live_sockets") == 0
    assert value(samples, "chaoslm_debates", status="running") == 0


def test_a_priced_calls_cost_is_counted_in_dollars(client, llm_server):
    from dataclasses import replace
    from decimal import Decimal

    from chaoslm.llm.prices import Price

    # $2 and $8 a million input and output tokens, as an admin sets a provider's price.
    endpoint = replace(default_endpoint(), name="priced", price=Price(Decimal(2), Decimal(8)))
    result = asyncio.run(chat(endpoint, [{"role": "user", "content": "hi"}]))
    expected = (result.prompt_tokens * 2 + result.completion_tokens * 8) / 1_000_000
    samples = scrape(client)
    assert value(samples, "chaoslm_model_cost_dollars_total", provider="priced", model="test-model") == pytest.approx(
        expected
    )
    assert float(result.cost) == pytest.approx(expected)
