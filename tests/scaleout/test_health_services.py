"""/readyz of a scale-out deployment (PostgreSQL, Redis, a Celery worker): 200 while every service answers, 503
naming the one that does not. The shared PostgreSQL and Redis stay up for the other tests: a web process is
pointed at a closed port instead, which is what a stopped server looks like from the web process."""

import subprocess
import sys
import time
from urllib.parse import urlsplit, urlunsplit

import httpx2 as httpx
import pytest

from tests.scaleout.conftest import ROOT
from tests.servers import free_port

pytestmark = pytest.mark.scaleout


def serve(stack, **env: str) -> str:
    """A daphne web process of `stack` with `env` changed; its base URL once /healthz answers. (Daphne itself, not
    runserver: runserver reads the migrations from the database before it serves.)"""
    port = free_port()
    log = (stack.log_dir / f"web-{port}.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
        cwd=ROOT,
        # Seconds a check may take: a cold process on a busy two-core machine imports redis and Celery in more than 1.
        env={**stack.env, "CHAOSLM_HEALTH_TIMEOUT": "5", **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    stack.workers.append(process)
    base = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return base
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError("the web process did not start")


def with_port(url: str, port: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{parts.password}@127.0.0.1:{port}"))


def readyz(base: str) -> tuple[int, dict]:
    """/readyz's answer once no check is still timing out: a cold process's first checks import redis and Celery,
    which on a busy two-core machine can outlast a check's time (a probe asks again)."""
    for _ in range(30):
        started = time.monotonic()
        response = httpx.get(base + "/readyz", timeout=10)
        assert time.monotonic() - started < 8  # every check within its 5 s, all at once
        body = response.json()
        if not any("no answer within" in check.get("reason", "") for check in body["checks"].values()):
            break
        time.sleep(1.1)  # past the second an answer is reused
    return response.status_code, body


def test_readyz_names_the_service_that_is_down(stack):
    stack.start_worker(threads=2)
    healthy = serve(stack)
    for _ in range(50):  # the worker may still be starting
        status, body = readyz(healthy)
        if status == 200:
            break
        time.sleep(1.1)
    assert status == 200, body
    assert {name: check["ok"] for name, check in body["checks"].items()} == {
        "database": True,
        "channel_layer": True,
        "celery": True,
        "model": True,
    }

    # PostgreSQL down: the database check fails, and says where, without the password.
    closed = free_port()
    no_database = serve(stack, DATABASE_URL=with_port(stack.env["DATABASE_URL"], closed))
    status, body = readyz(no_database)
    assert status == 503
    assert body["status"] == "failing"
    database = body["checks"]["database"]
    assert not database["ok"]
    assert database["reason"].startswith("the database did not answer: connection")
    assert f"port {closed} failed: Connection refused" in database["reason"]
    assert body["checks"]["channel_layer"]["ok"] and body["checks"]["model"]["ok"], body

    # Redis down: the channel layer and Celery's broker fail, each saying so.
    closed = free_port()
    no_redis = serve(stack, REDIS_URL=f"redis://:hunter2@127.0.0.1:{closed}/3")
    status, body = readyz(no_redis)
    assert status == 503
    assert body["checks"]["database"]["ok"] and body["checks"]["model"]["ok"]
    layer = body["checks"]["channel_layer"]
    assert not layer["ok"]
    assert layer["reason"].startswith(f"Redis (the channel layer) at 127.0.0.1:{closed} did not answer: ")
    assert "Connection refused" in layer["reason"]
    assert not body["checks"]["celery"]["ok"]
    text = str(body)
    assert "hunter2" not in text and "chaoslm:chaoslm" not in text
