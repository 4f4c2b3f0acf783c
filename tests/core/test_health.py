"""/healthz and /readyz as a load balancer or Kubernetes reads them: JSON, 200 when ready, 503 naming the failing
check and why, with no secret in it. (tests/scaleout/test_health_services.py stops PostgreSQL and Redis.)"""

import pytest

from chaoslm import health
from tests.servers import free_port

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh_probe():
    health._last = None  # a probe's answer is reused for a second: each test asks afresh
    yield
    health._last = None


def test_healthz_answers_json_without_asking_anything(client, settings):
    settings.ALLOWED_HOSTS = ["chaoslm.example.org"]  # a probe names the pod's address, not the site's host
    settings.SECURE_SSL_REDIRECT = True  # and speaks plain HTTP
    response = client.get("/healthz", HTTP_HOST="10.1.2.3:8000")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"status": "ok"}


def test_readyz_is_200_with_each_check_when_everything_answers(client, llm_server):
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "channel_layer", "celery", "model"}
    assert all(check["ok"] for check in body["checks"].values())
    assert len(llm_server.requests) == 0  # /models, not a completion: a probe costs no tokens


def test_readyz_is_503_naming_an_unreachable_model_endpoint_without_its_key(client, settings, llm_server):
    port = free_port()  # nothing listens there
    settings.OPENAI_BASE_URL = f"http://user:hunter2@127.0.0.1:{port}/v1"
    settings.OPENAI_API_KEY = "sk-secret-key"
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "failing"
    assert body["checks"]["database"] == {"ok": True, "ms": body["checks"]["database"]["ms"]}
    assert body["checks"]["model"] == {
        "ok": False,
        "reason": f"the model endpoint at 127.0.0.1:{port} could not be reached ([Errno 111] Connection refused)",
    }
    assert "hunter2" not in response.content.decode() and "sk-secret" not in response.content.decode()


def test_a_check_that_hangs_answers_within_its_second(client, monkeypatch, settings, llm_server):
    import asyncio
    import time

    async def hangs() -> None:
        await asyncio.sleep(30)

    monkeypatch.setitem(health.CHECKS, "model", hangs)
    settings.CHAOSLM_HEALTH_TIMEOUT = 1.0
    started = time.monotonic()
    response = client.get("/readyz")
    assert time.monotonic() - started < 3
    assert response.status_code == 503
    assert response.json()["checks"]["model"] == {"ok": False, "reason": "no answer within 1s"}


def test_secrets_are_taken_out_of_a_reason():
    assert health.redact('connection to "postgres://chaoslm:s3cret@db:5432/x" failed\nmore') == (
        'connection to "postgres://***@db:5432/x" failed'
    )
    assert health.redact("FATAL: password=s3cret rejected") == "FATAL: password=*** rejected"
