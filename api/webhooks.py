"""Webhooks: a user's addresses told when their debates finish or fail, their rooms leave auto mode, and their
tournaments and experiments finish.

A room "stops" when it leaves auto mode, whatever the cause: its owner stopped it or took the floor, or it
paused itself (its message limit, its context limit, an agent failing, everyone skipping, nobody taking part).
Its manual rounds have no end to tell, and a deleted room is no stop.

Each delivery is a POST of a JSON body, signed like the big payment and code hosts sign theirs:
`X-ChaosLM-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the webhook's secret>`.
Deliveries are work of the runner (chaoslm/runner.py: inline, or Celery in scale-out); a failure (no 2xx, a
timeout, a refused address) is retried with exponential backoff, CHAOSLM_WEBHOOK_ATTEMPTS times in all, and
every attempt is logged on the delivery (status, attempts, last error), where its owner sees it and may
redeliver.

Addresses: only globally routable unicast ones, by an explicit list of ranges (`REFUSED_V4`, `REFUSED_V6`;
an IPv6 form carrying an IPv4 address, such as IPv4-mapped, NAT64 or 6to4, is held to its IPv4 address's rule).
Anything else is refused as the webhook is registered, again after DNS resolution at each delivery (the
connection goes to the address that was checked), and at each redirect; CHAOSLM_WEBHOOKS_ALLOW_NETWORKS names
networks allowed anyway (a receiver on the same machine).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import json
import secrets
import socket
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urljoin, urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from api.models import Delivery, Webhook
from batches.kinds import COMPLETED, KINDS, BatchKind
from chaoslm import runner
from debates.models import Debate
from rooms.models import Room

if TYPE_CHECKING:
    import httpx

KIND = "webhook"
MAX_REDIRECTS = 3
# Seconds past a pending delivery's due time before the sweep takes it up (`overdue`).
OVERDUE_GRACE = 60.0


class Refused(ValueError):
    """An address webhooks may not reach; the message says why."""


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
IP = ipaddress.IPv4Address | ipaddress.IPv6Address

# Every IPv4 range that is not globally routable unicast (IANA's special-purpose registry, RFC 6890 and after),
# with what it is. An explicit list rather than `ipaddress`'s is_global/is_private, whose answers have changed
# between the Python versions the project supports.
REFUSED_V4: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "a 'this network' address"),
    ("10.0.0.0/8", "a private address"),
    ("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local (cloud metadata) address"),
    ("172.16.0.0/12", "a private address"),
    ("192.0.0.0/24", "an IETF protocol assignment"),
    ("192.0.2.0/24", "a documentation address"),
    ("192.88.99.0/24", "a 6to4 relay anycast address"),
    ("192.168.0.0/16", "a private address"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("224.0.0.0/4", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"),  # 255.255.255.255, the broadcast address, with it
)
# IPv6: only global unicast (2000::/3) may be reached at all; within it, these are not routable or not unicast.
GLOBAL_UNICAST_V6 = ipaddress.ip_network("2000::/3")
REFUSED_V6: tuple[tuple[str, str], ...] = (
    ("::/128", "the unspecified address"),
    ("::1/128", "a loopback address"),
    ("::/96", "an IPv4-compatible address"),
    ("::ffff:0:0:0/96", "an IPv4-translated address"),
    ("64:ff9b:1::/48", "a local-use NAT64 address"),
    ("100::/64", "a discard-only address"),
    ("2001::/23", "an IETF protocol assignment"),  # Teredo (2001::/32), benchmarking, ORCHID among them
    ("2001:db8::/32", "a documentation address"),
    ("3fff::/20", "a documentation address"),
    ("5f00::/16", "a segment-routing address"),
    ("fc00::/7", "a private address (unique local)"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("ff00::/8", "a multicast address"),
)
# IPv6 forms that carry an IPv4 address a connection reaches (so the IPv4 address is what is checked):
# IPv4-mapped (the socket connects over IPv4), NAT64's well-known prefix (a translator forwards to it), 6to4.
MAPPED = ipaddress.ip_network("::ffff:0:0/96")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
SIX_TO_FOUR = ipaddress.ip_network("2002::/16")

_V4 = tuple((ipaddress.ip_network(net), label) for net, label in REFUSED_V4)
_V6 = tuple((ipaddress.ip_network(net), label) for net, label in REFUSED_V6)


def allowed_networks() -> list[Network]:
    """The private, loopback or link-local networks this site lets webhooks reach (CHAOSLM_WEBHOOKS_ALLOW_NETWORKS)."""
    raw = settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS
    return [ipaddress.ip_network(n.strip(), strict=False) for n in raw.split(",") if n.strip()]


def embedded_v4(ip: IP) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 form carries and reaches, with the form's name; None for any other address."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip in MAPPED:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "IPv4-mapped"
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64"
    if ip in SIX_TO_FOUR:
        return ipaddress.IPv4Address((int(ip) >> 80) & 0xFFFFFFFF), "6to4"
    return None


def _refused_range(ip: IP) -> str | None:
    if isinstance(ip, ipaddress.IPv4Address):
        return next((label for network, label in _V4 if ip in network), None)
    label = next((label for network, label in _V6 if ip in network), None)
    if label is None and ip not in GLOBAL_UNICAST_V6 and ip not in MAPPED and ip not in NAT64:
        label = "not a global unicast address"
    return label


def address_refused(address: str) -> str | None:
    """Why webhooks may not reach `address` (an IP), or None: only globally routable unicast addresses, checked
    against the explicit ranges above; an IPv6 form carrying an IPv4 address is held to the IPv4 address's rule
    too. CHAOSLM_WEBHOOKS_ALLOW_NETWORKS lets the networks it names through (a receiver on this machine)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    carried = embedded_v4(ip)
    allowed = allowed_networks()
    if any(ip in network or (carried and carried[0] in network) for network in allowed):
        return None
    for checked, form in ((ip, ""), *([(carried[0], carried[1])] if carried else [])):
        label = _refused_range(checked)
        if label is not None:
            what = label if label.startswith("not ") else f"is {label}"
            shown = f"{ip} ({form} form of {checked})" if form else str(ip)
            network = f"{checked}/{checked.max_prefixlen}"
            return (
                f"{shown} {what}: webhooks go to public addresses only, or to networks the site's setting "
                f"CHAOSLM_WEBHOOKS_ALLOW_NETWORKS names (add {network} to it to allow this one)."
            )
    return None


def _literal(host: str) -> str | None:
    """The IP address `host` is written as ("[fe80::1%25eth0]" in a URL), or None for a name."""
    address = unquote(host)
    try:
        ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    return address


def resolve(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, the checked address to connect to) for `url`; Refused if any address is not allowed.

    Every address the name resolves to is checked, so a name with one public and one private address is refused.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # "http://[::1/x": an unclosed bracket, an address that is not one
        raise Refused("A webhook's address must be a valid http:// or https:// URL.") from None
    if parts.scheme not in {"http", "https"} or not host:
        raise Refused("A webhook's address must be an http:// or https:// URL with a host.")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise Refused("The address's port is not a number from 1 to 65535.") from None
    literal = _literal(host)
    if literal is not None and (reason := address_refused(literal)):
        raise Refused(reason)  # before resolving: a scoped address (fe80::1%eth0) need not exist here
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):  # socket.gaierror is an OSError; a name too long, a UnicodeError
        raise Refused(f"{host} does not resolve to an address.") from None
    addresses = sorted({info[4][0] for info in found})
    for address in addresses:
        reason = address_refused(address)
        if reason:
            raise Refused(f"{host}: {reason}" if host != address else reason)
    return parts.scheme, host, port, addresses[0]


def check_url(url: str) -> None:
    """Refused unless `url` may be registered."""
    resolve(url)


def event_kinds() -> list[tuple[str, str]]:
    """The events a webhook may be told of, each with its words: a debate's and a room's, then each registered kind
    of batch's `<kind>.finished`, read from the registry when asked."""
    batches = []
    for kind in KINDS.values():
        noun = str(kind.model._meta.verbose_name)
        batches.append((f"{kind.kind}.finished", f"{'an' if noun[0] in 'aeiou' else 'a'} {noun} finished"))
    return [*((str(v), str(label)) for v, label in Webhook.Kind.choices), *batches]


def register(owner: Any, url: str, secret: str, events: list[str]) -> Webhook:
    """A new webhook of `owner`'s (Refused, with why, for an address it may not reach)."""
    check_url(url)
    return Webhook.objects.create(owner=owner, url=url, secret=secret, events=sorted(set(events)))


# The longest address the account page's form takes (the API's body field has the same bound, api/hooks.py).
URL_MAX = 500
# The deliveries each webhook's log shows on the account page, newest first.
DELIVERIES_SHOWN = 20


def known_events(events: list[str]) -> list[str]:
    """Those of `events` a webhook may be told of (`event_kinds`), in the order given."""
    known = {value for value, _ in event_kinds()}
    return [kind for kind in events if kind in known]


def register_with_secret(owner: Any, url: str, events: list[str]) -> tuple[Webhook, str]:
    """The account page's form: a new webhook of `owner`'s and the secret made for it (the API's caller brings its
    own); Refused, with why, for no address or too long a one, no event, or an address it may not reach."""
    if not url or len(url) > URL_MAX:
        raise Refused(f"Give the address to tell: an https:// URL of at most {URL_MAX} characters.")
    if not events:
        raise Refused("Choose at least one event to be told of.")
    # The receiver keeps the secret to check each delivery's signature.
    secret = secrets.token_urlsafe(24)
    return register(owner, url, secret, events), secret


def with_deliveries(owner: Any) -> list[tuple[Webhook, list[Delivery]]]:
    """`owner`'s webhooks, each with its latest deliveries (at most DELIVERIES_SHOWN, newest first)."""
    return [
        (webhook, list(webhook.deliveries.all()[:DELIVERIES_SHOWN])) for webhook in Webhook.objects.filter(owner=owner)
    ]


def sign(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def notify_debate(debate: Debate) -> None:
    """A finished or failed debate (not a tournament's match): a delivery to each of its owner's webhooks for it."""
    if debate.owner_id is None or debate.in_batch:
        return
    if debate.status == Debate.Status.COMPLETED:
        kind, key = Webhook.Kind.DEBATE_FINISHED, f"debate.finished:{debate.pk}"
    elif debate.status == Debate.Status.ERROR:
        kind, key = Webhook.Kind.DEBATE_FAILED, f"debate.failed:{debate.pk}:{debate.updated_at.timestamp()}"
    else:
        return
    payload = {
        "type": str(kind),
        "debate": {
            "id": debate.pk,
            "topic": debate.topic,
            "format": debate.format,
            "status": debate.status,
            "winner": debate.winner,
            "error": debate.error_text,
        },
    }
    deliver(debate.owner_id, kind, key, payload)


def notify_batch(kind: BatchKind, batch: Any) -> None:
    """A completed batch (`tournament.finished`, `experiment.finished`): a delivery to each of its owner's webhooks
    for it, with its final progress."""
    if batch.owner_id is None or batch.status != COMPLETED:
        return
    event = f"{kind.kind}.finished"
    figures = kind.progress(batch)
    payload = {
        "type": event,
        kind.kind: {
            "id": batch.pk,
            "name": batch.name,
            "status": batch.status,
            "progress": {"total": figures.total, "done": figures.done, "failed": figures.failed},
        },
    }
    deliver(batch.owner_id, event, f"{event}:{batch.pk}", payload)


def deliver(owner_id: int, kind: str, key: str, payload: dict[str, Any]) -> None:
    """A delivery of `payload` to each of the owner's webhooks for `kind`; `key` names what happened, so the same
    thing saved again is told once."""
    for webhook in Webhook.objects.filter(owner_id=owner_id, active=True):
        if str(kind) not in webhook.events:
            continue
        try:
            with transaction.atomic():
                delivery = Delivery.objects.create(webhook=webhook, kind=str(kind), key=key, payload=payload)
        except IntegrityError:
            continue  # told already: the same end saved again
        runner.submit(KIND, delivery.pk)


def notify_room_stopped(room: Room, key: str) -> None:
    """The room left auto mode: why (the reason it paused itself, or its owner's doing) and how much it said."""
    if room.pause_reason:
        reason, by_owner = room.pause_reason, False
    else:
        reason, by_owner = ("the owner took the floor" if room.interrupted else "the owner stopped it"), True
    payload = {
        "type": str(Webhook.Kind.ROOM_STOPPED),
        "room": {
            "id": room.pk,
            "title": room.title,
            "reason": reason,
            "by_owner": by_owner,
            "messages_since_auto": room.messages_since_auto,
        },
    }
    deliver(room.owner_id, Webhook.Kind.ROOM_STOPPED, key, payload)


def _load(delivery_id: int) -> tuple[Delivery, Webhook] | None:
    """The delivery and its webhook while it is pending (a sweep's second run of a delivered one sends nothing)."""
    delivery = Delivery.objects.select_related("webhook").filter(pk=delivery_id, status=Delivery.Status.PENDING).first()
    return (delivery, delivery.webhook) if delivery else None


def _record(delivery_id: int, *, ok: bool, status_code: int | None, error: str, final: bool) -> None:
    delivery = Delivery.objects.get(pk=delivery_id)
    delivery.attempts += 1
    delivery.last_status_code = status_code
    if error:
        delivery.last_error = error[:2000]
    delivery.status = (
        Delivery.Status.DELIVERED if ok else (Delivery.Status.FAILED if final else Delivery.Status.PENDING)
    )
    delivery.save()


async def _post(url: str, headers: dict[str, str], body: bytes) -> httpx.Response:
    """POST `body`, following redirects by hand: each hop's address is checked, and connected to as checked."""
    import httpx  # here, not at the top: this module loads with every command, and httpx costs a good part of a start

    for _ in range(MAX_REDIRECTS + 1):
        scheme, host, port, address = await sync_to_async(resolve)(url)
        parts = urlsplit(url)
        literal = f"[{address}]" if ":" in address else address
        pinned = parts._replace(netloc=f"{literal}:{port}").geturl()
        extensions = {"sni_hostname": host} if scheme == "https" else {}
        host_header = parts.netloc.rsplit("@", 1)[-1]
        timeout = settings.CHAOSLM_WEBHOOK_TIMEOUT
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client:
            reply = await client.post(
                pinned, content=body, headers={**headers, "Host": host_header}, extensions=extensions
            )
        if reply.status_code in (301, 302, 303, 307, 308) and "location" in reply.headers:
            url = urljoin(url, reply.headers["location"])
            continue
        return reply
    raise Refused(f"More than {MAX_REDIRECTS} redirects.")


async def attempt(delivery_id: int) -> bool | None:
    """One delivery attempt, logged on the delivery: True when delivered, None when there is nothing to do."""
    loaded = await sync_to_async(_load)(delivery_id)
    if loaded is None:
        return None
    delivery, webhook = loaded
    body = json.dumps({"id": delivery.pk, **delivery.payload}, ensure_ascii=False).encode()
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "ChaosLM-Webhooks/1",
        "X-ChaosLM-Event": delivery.kind,
        "X-ChaosLM-Delivery": str(delivery.pk),
        "X-ChaosLM-Signature": sign(webhook.secret, timestamp, body),
    }
    final = delivery.attempts + 1 >= settings.CHAOSLM_WEBHOOK_ATTEMPTS
    import httpx  # see _post

    try:
        reply = await _post(webhook.url, headers, body)
    except Refused as error:
        await sync_to_async(_record)(delivery_id, ok=False, status_code=None, error=f"refused: {error}", final=final)
        return False
    except httpx.HTTPError as error:
        message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        await sync_to_async(_record)(delivery_id, ok=False, status_code=None, error=message, final=final)
        return False
    ok = 200 <= reply.status_code < 300
    error = "" if ok else f"HTTP {reply.status_code}"
    await sync_to_async(_record)(delivery_id, ok=ok, status_code=reply.status_code, error=error, final=final)
    return ok


def _attempts_left(delivery_id: int) -> int:
    attempts = Delivery.objects.filter(pk=delivery_id).values_list("attempts", flat=True).first()
    return 0 if attempts is None else settings.CHAOSLM_WEBHOOK_ATTEMPTS - attempts


async def run(delivery_id: int) -> None:
    """Deliver, retrying with exponential backoff (CHAOSLM_WEBHOOK_BACKOFF, doubled each time) until delivered
    or out of attempts."""
    wait = settings.CHAOSLM_WEBHOOK_BACKOFF
    while True:
        result = await attempt(delivery_id)
        if result is not False or await sync_to_async(_attempts_left)(delivery_id) <= 0:
            return
        await asyncio.sleep(wait)
        wait *= 2


def overdue() -> list[int]:
    """Pending deliveries whose next attempt is overdue: the process that was to make it has gone (a command
    that ended, a server restarted, a worker lost) or never got it. Due after its last attempt's backoff (at once
    before the first), with an attempt's timeout and a minute's grace on top."""
    now = timezone.now()
    grace = settings.CHAOSLM_WEBHOOK_TIMEOUT + OVERDUE_GRACE
    found = []
    for pk, attempts, updated_at in Delivery.objects.filter(status=Delivery.Status.PENDING).values_list(
        "pk", "attempts", "updated_at"
    ):
        backoff = settings.CHAOSLM_WEBHOOK_BACKOFF * 2 ** (attempts - 1) if attempts else 0.0
        if updated_at + timedelta(seconds=backoff + grace) < now:
            found.append(pk)
    return found


def sweep() -> list[int]:
    """The sweep (runner.register_sweep; Celery beat's api.tasks.sweep_webhooks): overdue deliveries are tried
    again, except those this process is trying now."""
    ids = [pk for pk in overdue() if not runner.inline.is_running(KIND, pk)]
    for delivery_id in ids:
        runner.submit(KIND, delivery_id)
    return ids


def redeliver(delivery: Delivery) -> None:
    """The owner asks again: a fresh round of attempts."""
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.PENDING, attempts=0)
    runner.submit(KIND, delivery.pk)


def on_debate_saved(sender: Any, instance: Debate, update_fields: Any = None, **kwargs: Any) -> None:
    if update_fields is not None and "status" not in update_fields:
        return
    if instance.status in (Debate.Status.COMPLETED, Debate.Status.ERROR):
        notify_debate(instance)


def on_room_saving(sender: Any, instance: Room, update_fields: Any = None, **kwargs: Any) -> None:
    """Before a room is saved in manual mode: note whether it was in auto mode until now, and since when."""
    if instance.pk is None or instance.mode != Room.Mode.MANUAL:
        return
    if update_fields is not None and "mode" not in update_fields:
        return
    before = Room.objects.filter(pk=instance.pk).values("mode", "updated_at").first()
    if before is not None and before["mode"] == Room.Mode.AUTO:
        # The auto run's last saved state names this stop: an owner's stop and the room's own pause racing each
        # other both read it, and their deliveries share a key (one is told).
        instance._api_stopped_key = f"room.stopped:{instance.pk}:{before['updated_at'].timestamp()}"  # type: ignore[attr-defined]


def on_room_saved(sender: Any, instance: Room, **kwargs: Any) -> None:
    key = instance.__dict__.pop("_api_stopped_key", None)
    if key is not None:
        # Told once the stop is committed, with the reason saved with it.
        transaction.on_commit(lambda: notify_room_stopped(instance, key))


def on_batch_saved(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    if update_fields is not None and "status" not in update_fields:
        return
    kind = next((k for k in KINDS.values() if k.model is sender), None)
    if kind is not None and instance.status == COMPLETED:
        notify_batch(kind, instance)
