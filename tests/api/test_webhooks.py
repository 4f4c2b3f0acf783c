"""Webhooks: signed deliveries retried with backoff until the receiver takes one, logged where the owner sees
them and may redeliver (over HTTP against a running server that may reach 127.0.0.1); and the address rule:
loopback, private, link-local and metadata addresses refused, also after resolution and at a redirect.

No test sends traffic off this machine: non-loopback addresses are checked through the address rule alone, and
`loopback_only` fails a test that tries to connect anywhere else.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import socket
import time

import pytest

from api import webhooks
from api.models import Delivery, Webhook
from api.tokens import create_token
from tests.api.conftest import api, make_token, wait_for
from tests.api.receiver import Receiver
from tests.api.test_debates import duel

SECRET = "a-secret-of-the-owners-choosing"
LOOPBACK = {"127.0.0.1", "127.0.0.2", "::1"}


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded(method):
        def call(sock, address):
            if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
                pytest.fail(f"a test tried to connect to {address[0]}")
            return method(sock, address)

        return call

    monkeypatch.setattr(socket.socket, "connect", guarded(connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guarded(connect_ex))


def verified(received) -> dict:
    """The body, after checking its signature as a receiver would."""
    fields = dict(part.split("=", 1) for part in received.headers["X-ChaosLM-Signature"].split(","))
    expected = hmac.new(SECRET.encode(), f"{fields['t']}.".encode() + received.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(fields["v1"], expected)
    assert abs(time.time() - int(fields["t"])) < 120
    return json.loads(received.body)


def wait_until(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_delivery_that_fails_twice_is_retried_and_the_third_arrives_signed(server, llm):
    llm.configure(latency=0.0, reply_words=8)
    receiver = Receiver(script=[500, 500, 200])
    try:
        with api(server, make_token(server, "olive")) as client:
            hook = client.post("/webhooks", json={"url": receiver.url, "secret": SECRET, "events": ["debate.finished"]})
            assert hook.status_code == 201, hook.text
            debate = duel(client, judge=False)
            wait_for(client, debate["id"], "completed")
            wait_until(lambda: len(receiver.received) >= 3)
            bodies = [verified(r) for r in receiver.received]
            assert len({b["id"] for b in bodies}) == 1  # one delivery, three attempts
            assert bodies[-1]["type"] == "debate.finished" and bodies[-1]["debate"]["id"] == debate["id"]
            assert receiver.received[-1].headers["X-ChaosLM-Event"] == "debate.finished"
            deliveries = client.get(f"/webhooks/{hook.json()['id']}/deliveries").json()
            assert [(d["status"], d["attempts"], d["last_status_code"], d["last_error"]) for d in deliveries] == [
                ("delivered", 3, 200, "HTTP 500")
            ]
            # The owner redelivers: once more, the same body.
            again = client.post(f"/deliveries/{deliveries[0]['id']}/redeliver")
            assert again.status_code == 202
            wait_until(lambda: len(receiver.received) == 4)
            assert verified(receiver.received[-1]) == bodies[-1]
    finally:
        receiver.close()


def test_webhooks_are_their_owners(server):
    with api(server, make_token(server, "olive")) as owner:
        hook = owner.post(
            "/webhooks", json={"url": "http://127.0.0.1:9/h", "secret": SECRET, "events": ["debate.failed"]}
        )
        hook_id = hook.json()["id"]
    with api(server, make_token(server, "otto")) as other:
        assert other.get(f"/webhooks/{hook_id}/deliveries").status_code == 404
        assert other.delete(f"/webhooks/{hook_id}").status_code == 404
        assert hook_id not in [w["id"] for w in other.get("/webhooks").json()]
    with api(server, make_token(server, "olive", write=False)) as read_only:
        assert (
            read_only.post(
                "/webhooks", json={"url": "http://127.0.0.1:9/", "secret": SECRET, "events": ["debate.failed"]}
            ).status_code
            == 403
        )
        assert read_only.delete(f"/webhooks/{hook_id}").status_code == 403
    with api(server, None) as anonymous:
        assert anonymous.get("/webhooks").status_code == 401
    with api(server, make_token(server, "olive")) as owner:
        assert owner.delete(f"/webhooks/{hook_id}").status_code == 204


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "169.254.169.254",
        "fd00::1",
        "127.0.0.1",
        "::1",
        "192.168.1.10",
        "100.64.0.1",
        "::ffff:10.0.0.1",
        "0.0.0.0",
        "fe80::1",
    ],
)
def test_the_address_rule_refuses_what_is_not_public(address, settings):
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = ""
    assert webhooks.address_refused(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:4700:4700::1111"])
def test_the_address_rule_lets_public_addresses_through(address, settings):
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = ""
    assert webhooks.address_refused(address) is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://10.0.0.1/hook", "10.0.0.1 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local (cloud metadata) address"),
        ("http://[fd00::1]/hook", "fd00::1 is a private address"),
        ("http://127.0.0.1:8000/hook", "127.0.0.1 is a loopback address"),
        ("http://localhost:8000/hook", "localhost: 127.0.0.1 is a loopback address"),
        ("ftp://example.com/hook", "must be an http:// or https:// URL"),
    ],
)
def test_registering_a_refused_address_is_a_422(client, people, settings, url, says):
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = ""

    _, secret = create_token(people["owner"], "t", read_only=False)
    reply = client.post(
        "/api/v1/webhooks",
        {"url": url, "secret": SECRET, "events": ["debate.finished"]},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert reply.status_code == 422
    assert says in reply.json()["errors"][0]["message"]
    assert not Webhook.objects.exists()


def _delivery(owner, url: str) -> Delivery:
    hook = Webhook.objects.create(owner=owner, url=url, secret=SECRET, events=["debate.finished"])
    return Delivery.objects.create(webhook=hook, kind="debate.finished", key="k", payload={"type": "debate.finished"})


@pytest.mark.django_db(transaction=True)
def test_a_delivery_to_loopback_is_refused_at_send_time_without_the_allow_setting(people, settings):
    """Registered while allowed, then the setting is off: the address is checked again at each attempt."""
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = ""
    settings.CHAOSLM_WEBHOOK_ATTEMPTS = 1
    receiver = Receiver()
    try:
        for url in (receiver.url, receiver.url.replace("127.0.0.1", "localhost")):
            delivery = _delivery(people["owner"], url)
            assert asyncio.run(webhooks.attempt(delivery.pk)) is False
            delivery.refresh_from_db()
            assert delivery.status == "failed" and delivery.last_error.startswith("refused: ")
            assert "loopback" in delivery.last_error
        assert receiver.received == []
    finally:
        receiver.close()


@pytest.mark.django_db(transaction=True)
def test_a_redirect_to_a_refused_address_is_not_followed(people, settings):
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = "127.0.0.1/32"
    settings.CHAOSLM_WEBHOOK_ATTEMPTS = 1
    elsewhere = Receiver(host="127.0.0.2")
    first = Receiver(script=[(307, elsewhere.url)])
    try:
        delivery = _delivery(people["owner"], first.url)
        assert asyncio.run(webhooks.attempt(delivery.pk)) is False
        delivery.refresh_from_db()
        assert delivery.last_error == (
            "refused: 127.0.0.2 is a loopback address: webhooks go to public addresses only, or to networks the "
            "site's setting CHAOSLM_WEBHOOKS_ALLOW_NETWORKS names (add 127.0.0.2/32 to it to allow this one)."
        )
        assert len(first.received) == 1 and elsewhere.received == []
    finally:
        first.close()
        elsewhere.close()


def test_the_guard_fails_a_connection_off_this_machine():
    with pytest.raises(pytest.fail.Exception), socket.socket() as sock:
        sock.connect(("10.0.0.1", 80))
