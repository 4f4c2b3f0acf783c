"""API tests: a real ChaosLM server (daphne, via runserver) in a subprocess on a free port, with the
OpenAI-compatible test server behind it, called over HTTP with httpx. Tokens are made the way a person makes
them: logged in, on the account page."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.servers import manage, running_site

ROOT = Path(__file__).resolve().parents[2]
PEOPLE = {"olive": "pw-olive-123", "otto": "pw-otto-123", "stella": "pw-stella-123"}
STAFF = {"stella"}


@pytest.fixture(scope="session")
def api_env(tmp_path_factory, _llm_server_process) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("api-site")
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder}/site.sqlite3",
        "OPENAI_BASE_URL": _llm_server_process.url,
        "OPENAI_API_KEY": "api-tests",
        "CHAOSLM_DEFAULT_MODEL": "test-model",
        "CHAOSLM_TRANSCRIPTS_DIR": str(folder / "transcripts"),
        "CHAOSLM_DEBUG": "true",
        "CHAOSLM_LLM_TIMEOUT": "10",
        "CHAOSLM_LLM_BACKOFF": "0.01",
        "CHAOSLM_LOG_LEVEL": "WARNING",
        "CHAOSLM_API_STREAM_TICK": "0.1",
        # Small enough to reach in a test, large enough for every other test's calls.
        "CHAOSLM_MAX_REQUEST_BYTES": str(64 * 1024),
        "CHAOSLM_STARTS_PER_MINUTE": "1000",
        "CHAOSLM_MAX_RUNNING_DEBATES": "100",
        # The webhook receivers in the tests listen on this machine.
        "CHAOSLM_WEBHOOKS_ALLOW_NETWORKS": "127.0.0.1/32",
        "CHAOSLM_WEBHOOK_BACKOFF": "0.2",
        "CHAOSLM_WEBHOOK_TIMEOUT": "3",
    }
    manage(env, "migrate", "--noinput")
    manage(env, "import_personas", "personas/samples/")
    create = "; ".join(
        f"User.objects.create_user({name!r}, password={password!r}, is_staff={name in STAFF})"
        for name, password in PEOPLE.items()
    )
    manage(env, "shell", "-c", f"from django.contrib.auth.models import User; {create}")
    return env


@pytest.fixture(scope="session")
def server(api_env) -> Iterator[str]:
    """The base URL of a running ChaosLM."""
    with running_site(api_env, "api-server") as base:
        yield base


@pytest.fixture
def llm(_llm_server_process):
    _llm_server_process.reset()
    return _llm_server_process


@contextmanager
def logged_in(base: str, user: str) -> Iterator[httpx.Client]:
    """A browser-like session: logged in through the login form, CSRF cookie and all."""
    with httpx.Client(base_url=base, follow_redirects=False, timeout=10) as client:
        yield _log_in(client, user)


def _log_in(client: httpx.Client, user: str) -> httpx.Client:
    page = client.get("/accounts/login/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    reply = client.post(
        "/accounts/login/", data={"username": user, "password": PEOPLE[user], "csrfmiddlewaretoken": csrf}
    )
    assert reply.status_code == 302, reply.text
    return client


def csrf_of(page: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)


def make_token(base: str, user: str, *, write: bool = True, name: str = "tests") -> str:
    """A new token for `user`, made on the account page; its secret read off the page that shows it once."""
    with logged_in(base, user) as client:
        page = client.get("/account/tokens/")
        reply = client.post(
            "/account/tokens/",
            data={"name": name, "access": "write" if write else "read", "csrfmiddlewaretoken": csrf_of(page.text)},
        )
        assert reply.status_code == 200, reply.text
        return re.search(r'class="share-link new-token" readonly value="([^"]+)"', reply.text).group(1)


def revoke_token(base: str, user: str, name: str) -> None:
    """Revoke `user`'s token called `name` on the account page."""
    with logged_in(base, user) as client:
        page = client.get("/account/tokens/").text
        row = next(r for r in page.split('<li class="card">') if f"<strong>{name}</strong>" in r)
        action = re.search(r'action="(/account/tokens/\d+/revoke/)"', row).group(1)
        assert client.post(action, data={"csrfmiddlewaretoken": csrf_of(page)}).status_code == 302


def api(base: str, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=base + "/api/v1", headers=headers, timeout=20)


def wait_for(client: httpx.Client, debate_id: int, *statuses: str, timeout: float = 60) -> dict:
    """Poll GET /debates/{id} until its status is one of `statuses`; the debate as then returned."""
    deadline = time.monotonic() + timeout
    while True:
        debate = client.get(f"/debates/{debate_id}").json()
        if debate["status"] in statuses:
            return debate
        assert time.monotonic() < deadline, f"debate {debate_id} is still {debate['status']}"
        time.sleep(0.1)
