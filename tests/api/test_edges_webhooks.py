"""Webhook addresses at their edges: every form of an address that is not globally routable unicast is refused,
IPv6 forms that carry an IPv4 address included, by the explicit ranges of api/webhooks.py, at registration and
again at delivery (a name may resolve elsewhere by then). A URL that does not parse is a 422, never a 500.

No test sends traffic off this machine: names are resolved by a stand-in for the resolver, literal addresses
need none, and a connection anywhere but loopback fails the test (the guard of test_webhooks.py)."""

from __future__ import annotations

import asyncio
import re
import socket

import pytest

from api import webhooks
from api.models import Delivery, Webhook
from api.tokens import create_token
from tests.api.test_webhooks import loopback_only  # noqa: F401  (autouse: no connection off this machine)

SECRET = "a-secret-of-the-owners-choosing"


@pytest.fixture(autouse=True)
def nothing_allowed(settings):
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = ""


REFUSED = {
    # IPv4
    "0.0.0.0": "'this network'",
    "0.1.2.3": "'this network'",
    "10.1.2.3": "private",
    "100.64.0.1": "shared (carrier-grade NAT)",
    "100.127.255.254": "shared (carrier-grade NAT)",
    "127.0.0.1": "loopback",
    "127.255.0.9": "loopback",
    "169.254.169.254": "link-local (cloud metadata)",
    "172.16.0.1": "private",
    "172.31.255.255": "private",
    "192.0.0.8": "IETF protocol assignment",
    "192.0.2.10": "documentation",
    "192.88.99.1": "6to4 relay anycast",
    "192.168.1.1": "private",
    "198.18.0.1": "benchmarking",
    "198.19.255.1": "benchmarking",
    "198.51.100.7": "documentation",
    "203.0.113.9": "documentation",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "240.0.0.1": "reserved",
    "255.255.255.255": "reserved",
    # IPv6
    "::": "unspecified",
    "::1": "loopback",
    "::127.0.0.1": "IPv4-compatible",
    "::8.8.8.8": "IPv4-compatible",
    "::ffff:0:7f00:1": "IPv4-translated",
    "64:ff9b:1::a9fe:a9fe": "local-use NAT64",
    "100::1": "discard-only",
    "2001::1": "IETF protocol assignment",  # Teredo
    "2001:0:4136:e378:8000:63bf:3fff:fdd2": "IETF protocol assignment",  # a Teredo client
    "2001:2::1": "IETF protocol assignment",  # benchmarking
    "2001:db8::1": "documentation",
    "3fff::1": "documentation",
    "5f00::1": "segment-routing",
    "fc00::1": "private",
    "fd12:3456::1": "private",
    "fe80::1": "link-local",
    "fe80::1%eth0": "link-local",
    "fec0::1": "site-local",
    "ff02::1": "multicast",
    "ff0e::1": "multicast",
    "4000::1": "not a global unicast address",
    "1::1": "not a global unicast address",
    # IPv6 forms that carry a private IPv4 address: refused for the IPv4 address
    "::ffff:127.0.0.1": "IPv4-mapped form of 127.0.0.1) is a loopback",
    "::ffff:169.254.169.254": "IPv4-mapped form of 169.254.169.254) is a link-local",
    "::ffff:10.0.0.1": "IPv4-mapped form of 10.0.0.1) is a private",
    "64:ff9b::7f00:1": "NAT64 form of 127.0.0.1) is a loopback",
    "64:ff9b::a9fe:a9fe": "NAT64 form of 169.254.169.254) is a link-local",
    "64:ff9b::c0a8:101": "NAT64 form of 192.168.1.1) is a private",
    "2002:7f00:1::1": "6to4 form of 127.0.0.1) is a loopback",
    "2002:a9fe:a9fe::1": "6to4 form of 169.254.169.254) is a link-local",
    "2002:a00:1::": "6to4 form of 10.0.0.1) is a private",
}


@pytest.mark.parametrize(("address", "says"), REFUSED.items())
def test_every_address_that_is_not_global_unicast_is_refused_saying_why(address, says):
    reason = webhooks.address_refused(address)
    assert reason is not None and says in reason, reason
    # It names the setting that would allow it, and the network to add: the IPv4 address an IPv6 form carries.
    assert (
        "webhooks go to public addresses only, or to networks the site's setting CHAOSLM_WEBHOOKS_ALLOW_NETWORKS "
        in (reason)
    )
    assert re.search(r"names \(add [0-9a-f.:]+/(32|128) to it to allow this one\)\.$", reason), reason


@pytest.mark.parametrize(
    "address",
    [
        "93.184.215.14",
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700:4700::1111",
        "2a00:1450:4001::200e",
        "::ffff:8.8.8.8",  # IPv4-mapped form of a public address
        "64:ff9b::808:808",  # NAT64 form of a public address
        "2002:808:808::1",  # 6to4 form of a public address
    ],
)
def test_global_unicast_addresses_and_their_forms_pass(address):
    assert webhooks.address_refused(address) is None


def test_the_allow_setting_lets_a_named_network_through_in_any_form(settings):
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = "127.0.0.1/32"
    assert webhooks.address_refused("127.0.0.1") is None
    assert webhooks.address_refused("::ffff:127.0.0.1") is None
    assert webhooks.address_refused("127.0.0.2") is not None
    assert webhooks.address_refused("10.0.0.1") is not None


def _register(client, secret, url):
    return client.post(
        "/api/v1/webhooks",
        {"url": url, "secret": SECRET, "events": ["debate.finished"]},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://[::1/x", "must be a valid http:// or https:// URL"),
        ("http://[::ffff:127.0.0.1]/hook", "IPv4-mapped form of 127.0.0.1) is a loopback address"),
        ("http://[64:ff9b::a9fe:a9fe]/latest/meta-data/", "NAT64 form of 169.254.169.254) is a link-local"),
        ("http://[2002:a9fe:a9fe::1]/", "6to4 form of 169.254.169.254"),
        ("http://[fec0::1]/hook", "site-local"),
        ("http://[fe80::1%25eth0]/hook", "link-local"),
        ("http://[2001:db8::1]:8080/hook", "documentation"),
        ("http://0x7f.1/hook", "loopback"),  # the resolver reads old forms of 127.0.0.1
        ("http://2130706433/hook", "loopback"),
        ("http://example.com:99999/hook", "port is not a number from 1 to 65535"),
        ("http:///nohost", "with a host"),
        ("http://" + "a" * 64 + ".example/hook", "does not resolve"),
    ],
)
def test_registering_any_of_them_is_a_422_never_a_500(client, people, url, says, monkeypatch):
    real = socket.getaddrinfo

    def offline(host, *args, **kwargs):
        # Literal addresses and the old numeric forms resolve without a query; a name would leave the machine.
        if host.rstrip(".").endswith((".example", ".com")):
            raise socket.gaierror(socket.EAI_NONAME, "not looked up in tests")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", offline)
    _, secret = create_token(people["owner"], "t", read_only=False)
    reply = _register(client, secret, url)
    assert reply.status_code == 422, reply.content
    assert reply["Content-Type"] == "application/problem+json"
    assert says in reply.json()["errors"][0]["message"]
    assert not Webhook.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("resolved", ["::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "10.0.0.5", "fec0::2"])
def test_a_name_that_resolves_to_a_refused_form_at_delivery_is_not_sent(people, settings, monkeypatch, resolved):
    """Registered while the name resolved to a public address; at delivery it resolves to a refused one."""
    settings.CHAOSLM_WEBHOOK_ATTEMPTS = 1
    family = socket.AF_INET6 if ":" in resolved else socket.AF_INET
    answers = {"hooks.example": [(family, socket.SOCK_STREAM, 6, "", (resolved, 80))]}
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: answers[host])
    hook = Webhook.objects.create(
        owner=people["owner"], url="http://hooks.example/h", secret=SECRET, events=["debate.finished"]
    )
    delivery = Delivery.objects.create(webhook=hook, kind="debate.finished", key="k", payload={"type": "x"})
    assert asyncio.run(webhooks.attempt(delivery.pk)) is False
    delivery.refresh_from_db()
    assert delivery.status == "failed"
    assert delivery.last_error.startswith("refused: hooks.example: ") and "public addresses only" in delivery.last_error


def test_a_name_with_one_public_and_one_refused_address_is_refused(monkeypatch):
    answers = [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 443)),
        (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::ffff:192.168.0.1", 443, 0, 0)),
    ]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: answers)
    with pytest.raises(webhooks.Refused, match=r"192\.168\.0\.1"):
        webhooks.resolve("https://mixed.example/hook")
