"""ChaosLM's own error pages under `make run` (`manage.py serve`): never Django's debug pages, which list every
URL pattern; a crash's traceback goes to the console only."""

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from bench._setup import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(tmp_path_factory, _llm_server_process):
    """A real `manage.py serve` as `make run` starts it (debug on by default), with a model endpoint set."""
    folder = tmp_path_factory.mktemp("serve")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CHAOSLM_", "DJANGO_"))}
    env |= {
        "DATABASE_URL": f"sqlite:///{folder}/site.sqlite3",
        "OPENAI_BASE_URL": _llm_server_process.url,
        "OPENAI_API_KEY": "error-pages",
        "CHAOSLM_TRANSCRIPTS_DIR": str(folder / "transcripts"),
    }
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=120)
    port = free_port()
    log_path = folder / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            httpx.get(base + "/", timeout=2)
            break
        except httpx.HTTPError:
            assert process.poll() is None, log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, log_path.read_text(errors="replace")
            time.sleep(0.3)
    yield base
    process.terminate()
    process.wait(10)


def assert_site_page(html: str) -> None:
    """Styled like the site, with a way home, and nothing of Django's debug page."""
    assert '<link rel="stylesheet" href="/static/css/chaoslm.css">' in html
    assert '<a class="button primary" href="/">Go to the home page</a>' in html
    for debug in ("Using the URLconf", "urlpatterns", "DEBUG = True", "Traceback", "config.urls"):
        assert debug not in html


@pytest.mark.parametrize("path", ["/no-such-page/", "/debates/999999/", "/rooms/999999/", "/s/not-a-token/"])
def test_a_missing_page_under_serve_is_chaoslms_own_404(served, path):
    response = httpx.get(served + path)
    assert response.status_code == 404
    assert "<h1>Page not found</h1>" in response.text
    assert_site_page(response.text)


def test_a_form_without_its_token_under_serve_is_chaoslms_own_403(served):
    response = httpx.post(served + "/accounts/login/", data={"username": "a", "password": "b"})
    assert response.status_code == 403
    assert "<h1>This form could not be sent</h1>" in response.text
    assert_site_page(response.text)


def test_the_stylesheet_is_still_served(served):
    response = httpx.get(served + "/static/css/chaoslm.css")
    assert response.status_code == 200 and "overflow-wrap" in response.text


def test_the_403_and_500_pages(settings, rf):
    from django.core.exceptions import PermissionDenied
    from django.views import defaults

    settings.DEBUG = False
    forbidden = defaults.permission_denied(rf.get("/x/"), PermissionDenied())
    assert forbidden.status_code == 403 and "<h1>Not allowed</h1>" in forbidden.content.decode()
    assert_site_page(forbidden.content.decode())
    crashed = defaults.server_error(rf.get("/x/"))
    assert crashed.status_code == 500 and "<h1>Something went wrong</h1>" in crashed.content.decode()
    assert_site_page(crashed.content.decode())


def test_a_crash_is_logged_to_the_console_with_debug_off():
    # Django's own console handler speaks only under DEBUG (a filter); this one always does.
    handlers = logging.getLogger("django.request").handlers
    record = logging.makeLogRecord({"name": "django.request", "levelno": logging.ERROR, "msg": "crash"})
    # Its filters (the log context's fields) let an error through with DEBUG off.
    assert [h for h in handlers if type(h) is logging.StreamHandler and h.filter(record)]
