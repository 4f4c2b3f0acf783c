"""/healthz and /readyz as a load balancer or Kubernetes reads them: JSON, 200 when ready, 503 naming the failing
check and why, with no secret in it. (tests/scaleout/test_health_services.py stops PostgreSQL and Redis.)"""

import pytest

from chaoslm import health
from chaoslm.llm.proxies import proxy_for
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


class _Proxy:
    """A forward proxy that answers every request itself, as a proxy in front of a provider passes on its answer:
    it records the address each request was for."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        seen = self.seen = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                body = b'{"object": "list", "data": []}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy(monkeypatch):
    found = _Proxy()
    for name in ("no_proxy", "NO_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", found.url)
    yield found
    found.close()


def test_readyz_reaches_the_model_through_the_proxy_its_calls_go_through(client, settings, proxy):
    # A provider this machine reaches only through its proxy: the name does not resolve here.
    settings.OPENAI_BASE_URL = "http://provider.invalid/v1"
    response = client.get("/readyz")
    assert response.json()["checks"]["model"]["ok"], response.json()
    assert response.status_code == 200
    assert proxy.seen == ["http://provider.invalid/v1/models"]


def test_readyz_goes_direct_where_no_proxy_says_so_as_the_calls_do(client, monkeypatch, proxy, llm_server):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    assert proxy_for("http", "127.0.0.1") is None  # the gateway's transport asks the same
    assert proxy_for("http", "provider.invalid") == proxy.url
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    assert proxy.seen == []
