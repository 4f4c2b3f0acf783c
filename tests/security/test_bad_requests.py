"""The holes a black-box probe found (issue 13), each as the probe's request: the status and body it gets now.

Also: debug pages never reach the network, and an owner resets a share link.
"""

import asyncio
import io

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from config.asgi import application as site
from debates.management.commands.serve import is_loopback
from debates.models import Debate
from personas.models import Persona, import_personas
from rooms import services
from rooms.models import Room
from tests.security.test_access import make_debate
from tests.tournaments.test_web import make_tournament

pytestmark = pytest.mark.django_db(transaction=True)

XSS_NAME = "<svg onload=alert(1)>Chatty"
# The websocket stack exactly as config/asgi.py wires it, without the outer wrapper that records the
# serving loop (a test's loop ends with the test; the inline runner must not adopt it).
application = site.app.application_mapping["websocket"]


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def mallory():
    return get_user_model().objects.create_user("mallory", password="pw-mallory-123")


def logged_in(user, **kwargs):
    client = Client(**kwargs)
    client.force_login(user)
    return client


# 1. The websocket origin check: scheme, host and port.


async def socket(path, *, origin, host="127.0.0.1:8000", cookie="", scheme="ws"):
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    communicator.scope["scheme"] = scheme
    connected, _ = await communicator.connect()
    first = await communicator.receive_from() if connected else ""
    await communicator.disconnect()
    return connected, first


def session_cookie(user):
    return f"sessionid={logged_in(user).cookies['sessionid'].value}"


@pytest.mark.parametrize("debug", [True, False])
def test_a_socket_from_another_port_is_refused_and_the_sites_own_is_accepted(alice, settings, debug):
    settings.DEBUG = debug
    debate = make_debate(alice, "private")
    path, cookie = f"/ws/debates/{debate.pk}/?since=0", session_cookie(alice)
    assert asyncio.run(socket(path, origin="http://127.0.0.1:9999", cookie=cookie)) == (False, "")
    connected, first = asyncio.run(socket(path, origin="http://127.0.0.1:8000", cookie=cookie))
    assert connected and 'id="ev-0"' in first  # her private transcript


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "accepted"),
    [
        ("http://localhost:8000", "localhost:8000", "ws", True),
        ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws", False),  # the page was not served over TLS
        ("https://127.0.0.1:8000", "127.0.0.1:8000", "wss", True),
        ("http://127.0.0.1", "127.0.0.1:8000", "ws", False),
        ("http://evil.example:8000", "evil.example:8000", "ws", False),  # not an allowed host
        ("null", "127.0.0.1:8000", "ws", False),
        (None, "127.0.0.1:8000", "ws", False),
        ("https://chaos.example.org", "127.0.0.1:8000", "ws", True),  # CHAOSLM_CSRF_TRUSTED_ORIGINS
        ("https://chaos.example.org:8443", "127.0.0.1:8000", "ws", False),
        ("https://eu.chaos.example.net", "127.0.0.1:8000", "ws", True),  # https://*.chaos.example.net
        ("http://eu.chaos.example.net", "127.0.0.1:8000", "ws", False),
    ],
)
def test_the_origin_rule_is_djangos_csrf_rule(alice, settings, origin, host, scheme, accepted):
    settings.CSRF_TRUSTED_ORIGINS = ["https://chaos.example.org", "https://*.chaos.example.net"]
    debate = make_debate(alice, "public")
    connected, _ = asyncio.run(socket(f"/ws/debates/{debate.pk}/", origin=origin, host=host, scheme=scheme))
    assert connected == accepted


# 2. Names in error replies are escaped.


def test_adding_a_persona_already_in_the_room_answers_an_escaped_422(alice):
    (persona,) = import_personas([("x.yaml", f"name: '{XSS_NAME}'\nrole: chat\npersonality: Hi.\n")])
    room = Room.objects.create(title="R", owner=alice)
    services.add_agent(room, persona)
    response = logged_in(alice).post(reverse("room_add_agent", args=[room.pk]), {"persona": persona.pk})
    assert response.status_code == 422
    assert response.content.decode() == "&lt;svg onload=alert(1)&gt;Chatty is already in this room."


def test_room_settings_errors_are_escaped(alice):
    room = Room.objects.create(title="R", owner=alice)
    response = logged_in(alice).post(reverse("room_settings", args=[room.pk]), {"response_delay": "<b>x</b>"})
    assert response.status_code == 422
    assert "<" not in response.content.decode() and "response_delay" in response.content.decode()


# 3. Only md and json exports exist.


@pytest.mark.parametrize("suffix", ["html", "md%22%3B%20x%3D%22y", "md%00", "md%0d%0a", "mdx", "json.html", "txt"])
def test_an_unknown_export_kind_is_a_404(alice, suffix):
    debate = make_debate(alice, "public")
    client = logged_in(alice, raise_request_exception=False)
    for base in (f"/debates/{debate.pk}/export.", f"/s/{debate.share_token}/export."):
        response = client.get(base + suffix)
        assert response.status_code == 404
        assert "Content-Disposition" not in response


def test_md_and_json_exports_are_named_from_the_id(alice):
    debate = make_debate(alice, "public")
    client = logged_in(alice)
    for kind, content_type in (("md", "text/markdown; charset=utf-8"), ("json", "application/json")):
        response = client.get(f"/debates/{debate.pk}/export.{kind}")
        assert response.status_code == 200 and response["Content-Type"] == content_type
        assert response["Content-Disposition"] == f'attachment; filename="debate-{debate.pk}.{kind}"'


# 4. Deeply nested YAML is refused like any bad YAML.

NESTED = "name: Deep\nrole: chat\npersonality: " + "[" * 500 + "]" * 500 + "\n"
NESTED_MESSAGE = "deep.yaml: personality: is nested more than 20 levels deep (line 3)"


@pytest.fixture
def staff_client():
    staff = get_user_model().objects.create_user("stella", password="x", is_staff=True, is_superuser=True)
    return logged_in(staff, raise_request_exception=False)


def test_nested_yaml_in_the_admin_import_is_refused_naming_file_and_field(staff_client):
    files = [SimpleUploadedFile("deep.yaml", NESTED.encode())]
    response = staff_client.post(reverse("admin:personas_persona_import"), {"files": files})
    assert response.status_code == 200
    assert NESTED_MESSAGE in response.content.decode()
    assert not Persona.objects.exists()


def test_nested_yaml_in_the_add_form_is_refused_naming_the_field(staff_client):
    block = "name: Deep\nrole: chat\npersonality:\n" + "".join("  " * i + "-\n" for i in range(1, 500)) + "  x\n"
    for text in (NESTED, block):
        response = staff_client.post(reverse("admin:personas_persona_add"), {"yaml": text})
        assert response.status_code == 200
        assert "YAML: personality: is nested more than 20 levels deep" in response.content.decode()
    assert not Persona.objects.exists()


def test_nested_yaml_in_import_personas_is_a_command_error(tmp_path):
    (tmp_path / "ok.yaml").write_text("name: Fine\nrole: chat\npersonality: Hi.\n")
    (tmp_path / "deep.yaml").write_text(NESTED)
    with pytest.raises(CommandError) as raised:
        call_command("import_personas", str(tmp_path), stdout=io.StringIO())
    assert (
        str(raised.value) == f"{tmp_path / 'deep.yaml'}: personality: is nested more than 20 levels deep (line 3); "
        "persona fields are text or numbers (nothing was imported)"
    )
    assert not Persona.objects.exists()


# 5. Ids from forms and URLs.


@pytest.mark.parametrize(
    "body", ["persona=abc", "persona=1.5", "persona=%FF", "persona=", "persona=%C2%B2", "persona=" + "9" * 30]
)
def test_a_malformed_persona_id_is_a_400_with_a_message(alice, settings, body):
    settings.DEBUG = False
    room = Room.objects.create(title="R", owner=alice)
    client = logged_in(alice, raise_request_exception=False)
    response = client.post(
        reverse("room_add_agent", args=[room.pk]), body, content_type="application/x-www-form-urlencoded"
    )
    assert (response.status_code, response.content.decode()) == (
        400,
        "Choose a persona to add (its id, a whole number).",
    )


def test_an_unknown_persona_id_is_a_422(alice):
    room = Room.objects.create(title="R", owner=alice)
    response = logged_in(alice).post(reverse("room_add_agent", args=[room.pk]), {"persona": "12345"})
    assert response.status_code == 422 and "no such persona" in response.content.decode()


def test_ids_too_big_for_the_database_are_404s_and_malformed_keeps_are_ignored(alice):
    client = logged_in(alice, raise_request_exception=False)
    for path in ("/debates/" + "9" * 30 + "/", "/rooms/" + "9" * 25 + "/", "/debates/" + "9" * 5000 + "/export.md"):
        assert client.get(path).status_code == 404
    room = Room.objects.create(title="R", owner=alice)
    response = client.post(reverse("room_keep", args=[room.pk]), {"keep": ["²", "abc", "9" * 40]})
    assert response.status_code == 204
    assert client.get(reverse("persona_prompt"), {"seat_a": "²"}).status_code == 200


# 6. `since` out of range or malformed means from the start.


@pytest.mark.parametrize("since", ["9" * 5000, "-1", "abc", "%FF", "1e3", "99999999999999999999", "0x10"])
def test_a_bad_since_sends_the_whole_transcript(alice, since):
    debate = make_debate(alice, "public")
    connected, first = asyncio.run(socket(f"/ws/debates/{debate.pk}/?since={since}", origin="http://127.0.0.1:8000"))
    assert connected and 'id="ev-0"' in first


def test_a_query_string_that_is_not_utf8_sends_the_whole_transcript(alice):
    debate = make_debate(alice, "public")

    async def run():
        communicator = WebsocketCommunicator(
            application,
            f"/ws/debates/{debate.pk}/",
            headers=[(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")],
        )
        communicator.scope["query_string"] = b"since=\xff\xfe"
        connected, _ = await communicator.connect()
        first = await communicator.receive_from()
        await communicator.disconnect()
        return connected, first

    connected, first = asyncio.run(run())
    assert connected and 'id="ev-0"' in first


# Debug pages never reach a non-loopback client: `serve` refuses to start.


def test_serve_refuses_a_network_address_with_debug_on(settings):
    settings.DEBUG = True
    with pytest.raises(CommandError, match=r"Refusing to serve on 0\.0\.0\.0:8000 with debug on.*CHAOSLM_DEBUG=false"):
        call_command("serve", "0.0.0.0:8000")


def test_loopback_addresses():
    assert all(is_loopback(a) for a in ("8000", "127.0.0.1:8000", "localhost:8000", "[::1]:8000", "127.0.0.2:80"))
    assert not any(is_loopback(a) for a in ("0.0.0.0:8000", "[::]:8000", "192.168.1.5:8000", "example.org:8000"))


# An owner resets a share link.


@pytest.mark.parametrize("kind", ["debate", "room", "tournament"])
def test_the_owner_resets_a_share_link(alice, mallory, kind):
    if kind == "debate":
        thing = make_debate(alice, "unlisted")
    elif kind == "room":
        thing = Room.objects.create(title="R", owner=alice, visibility="unlisted")
    else:
        thing = make_tournament(alice, "unlisted")
    reset, share, detail = f"{kind}_share_reset", f"{kind}_share", f"{kind}_detail"
    old = thing.share_token
    stranger = Client()
    assert stranger.get(reverse(share, args=[old])).status_code == 200

    assert logged_in(mallory).post(reverse(reset, args=[thing.pk])).status_code == 404
    assert stranger.post(reverse(reset, args=[thing.pk])).status_code == 302  # to the login page
    csrf_checked = logged_in(alice, enforce_csrf_checks=True)
    assert csrf_checked.post(reverse(reset, args=[thing.pk])).status_code == 403
    assert logged_in(alice).get(reverse(reset, args=[thing.pk])).status_code == 405
    thing.refresh_from_db()
    assert thing.share_token == old

    response = logged_in(alice).post(reverse(reset, args=[thing.pk]), follow=True)
    assert response.redirect_chain == [(reverse(detail, args=[thing.pk]), 302)]
    assert "new share link; the old one no longer works" in response.content.decode()
    thing.refresh_from_db()
    assert thing.share_token != old and len(thing.share_token) >= 32
    assert stranger.get(reverse(share, args=[old])).status_code == 404
    assert stranger.get(reverse(share, args=[thing.share_token])).status_code == 200
    assert thing.share_token in response.content.decode()


def test_another_viewer_of_a_public_debate_may_not_reset_its_link(alice, mallory):
    debate = make_debate(alice, "public")
    assert logged_in(mallory).post(reverse("debate_share_reset", args=[debate.pk])).status_code == 403
    assert Debate.objects.get(pk=debate.pk).share_token == debate.share_token


@pytest.mark.parametrize("change", ["reset", "private"])
def test_sockets_opened_through_a_share_link_close_when_it_stops_working(alice, change):
    from asgiref.sync import sync_to_async

    debate = make_debate(alice, "unlisted")
    owner, cookie = logged_in(alice), session_cookie(alice)

    async def run():
        headers = [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")]
        shared = WebsocketCommunicator(application, f"/ws/share/{debate.share_token}/", headers=headers)
        own = WebsocketCommunicator(
            application, f"/ws/debates/{debate.pk}/", headers=[*headers, (b"cookie", cookie.encode())]
        )
        for communicator in (shared, own):
            assert (await communicator.connect())[0]
            await communicator.receive_from()  # the catch-up
        # The view runs in a thread whose pushes land on this loop, as the server's do.
        if change == "reset":
            await sync_to_async(owner.post)(reverse("debate_share_reset", args=[debate.pk]))
        else:
            await sync_to_async(owner.post)(reverse("debate_visibility", args=[debate.pk]), {"visibility": "private"})
        closed = await shared.receive_output(timeout=2)
        still_open = await own.receive_nothing(timeout=0.3)
        await own.disconnect()
        return closed, still_open

    closed, still_open = asyncio.run(run())
    assert closed == {"type": "websocket.close", "code": 4403}
    assert still_open  # the owner's own page is not a share link
