"""Who reads a debate's private thinking and its prompts: one rule (debates/privacy.py) for the page, the
socket's catch-up and pushes, the share page and both exports, for each kind of viewer, with the owner's
choice on and off."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.urls import reverse

from config.routing import websocket_urlpatterns
from debates.broadcast import DebateBroadcaster
from debates.formats import Step
from debates.models import Debate, Event, Seat

pytestmark = pytest.mark.django_db(transaction=True)

# (who, visibility, through the share link); the anonymous viewer reads an unlisted debate by its link.
VIEWERS = {
    "owner": ("unlisted", False),
    "other": ("public", False),
    "anonymous": ("unlisted", True),
    "staff": ("unlisted", False),
}
INSIDERS = {"owner", "staff"}
PLACEHOLDER = "the debate's owner keeps it from viewers"


def make_duel(owner, visibility, show_thinking):
    debate = Debate.objects.create(
        topic="Cars?",
        premise="Ban cars",
        format="duel",
        owner=owner,
        visibility=visibility,
        status=Debate.Status.RUNNING,
        show_thinking=show_thinking,
    )
    seats = {
        key: Seat.objects.create(debate=debate, key=key, role=role, side=side, name=name, order=i)
        for i, (key, role, side, name) in enumerate(
            [("a", "debater", "for", "Ada"), ("b", "debater", "against", "Bob"), ("judge", "judge", "", "Jo")]
        )
    }
    Event.objects.create(debate=debate, ordinal=0, kind="HEADER", content="Cars?")
    Event.objects.create(
        debate=debate,
        ordinal=1,
        seat=seats["a"],
        kind="PLAN",
        step="plan",
        visibility="private",
        prompt="PROMPT-OF-THE-PLAN",
        content="SECRET-PLAN of Ada",
    )
    Event.objects.create(
        debate=debate,
        ordinal=4,
        seat=seats["a"],
        kind="TURN",
        step="opening",
        prompt="PROMPT-OF-THE-TURN",
        content="Cars must go.",
    )
    Event.objects.create(
        debate=debate,
        ordinal=5,
        seat=seats["judge"],
        kind="THINK",
        step="evaluate",
        visibility="private",
        content="JUDGE-NOTE on Ada",
    )
    Event.objects.create(
        debate=debate,
        ordinal=29,
        seat=seats["judge"],
        kind="INTERNAL",
        step="verdict_json",
        visibility="private",
        content="INTERNAL-JSON",
    )
    return debate


def viewer(people, who):
    return AnonymousUser() if who == "anonymous" else people[who]


def client_for(people, who):
    client = Client()
    if who != "anonymous":
        client.force_login(people[who])
    return client


def addresses(debate, via_share):
    """The page, the socket and the export base of a viewer's address."""
    if via_share:
        token = debate.share_token
        return reverse("debate_share", args=[token]), f"/ws/share/{token}/", ("debate_share_export", token)
    return reverse("debate_detail", args=[debate.pk]), f"/ws/debates/{debate.pk}/", ("debate_export", debate.pk)


@pytest.mark.parametrize("show", [True, False], ids=["shown", "hidden"])
@pytest.mark.parametrize("who", list(VIEWERS))
def test_the_page_and_both_exports_follow_one_rule(people, who, show):
    visibility, via_share = VIEWERS[who]
    debate = make_duel(people["owner"], visibility, show)
    page, _, (export_name, key) = addresses(debate, via_share)
    client = client_for(people, who)
    reads_thinking = who in INSIDERS or show
    reads_prompts = who in INSIDERS

    html = client.get(page).content.decode()
    assert "Cars must go." in html
    assert ("SECRET-PLAN of Ada" in html) is reads_thinking and ("JUDGE-NOTE on Ada" in html) is reads_thinking
    # What is kept from a viewer still shows where it happened, with no text.
    assert (PLACEHOLDER in html) is not reads_thinking
    assert 'id="ev-1"' in html and 'id="ev-5"' in html
    assert "PROMPT-OF" not in html and "INTERNAL-JSON" not in html  # the page shows no prompt, no internal call

    markdown = client.get(reverse(export_name, args=[key, "md"])).content.decode()
    assert "Cars must go." in markdown
    assert ("SECRET-PLAN of Ada" in markdown) is reads_thinking and ("JUDGE-NOTE" in markdown) is reads_thinking
    assert ("INTERNAL-JSON" in markdown) is reads_prompts

    data = json.loads(client.get(reverse(export_name, args=[key, "json"])).content)
    kinds = [event["kind"] for event in data["events"]]
    assert ("PLAN" in kinds) is reads_thinking and ("THINK" in kinds) is reads_thinking
    assert ("INTERNAL" in kinds) is reads_prompts
    prompts = [event.get("prompt") for event in data["events"] if "prompt" in event]
    assert ("PROMPT-OF-THE-TURN" in prompts) is reads_prompts
    assert bool(prompts) is reads_prompts


@pytest.mark.parametrize("who", ["owner", "staff"])
def test_the_owner_and_staff_at_the_share_link_see_what_it_passes_on(people, who):
    debate = make_duel(people["owner"], "unlisted", show_thinking=False)
    client = client_for(people, who)
    html = client.get(reverse("debate_share", args=[debate.share_token])).content.decode()
    assert "SECRET-PLAN" not in html and PLACEHOLDER in html
    markdown = client.get(reverse("debate_share_export", args=[debate.share_token, "md"])).content.decode()
    assert "SECRET-PLAN" not in markdown and "PROMPT-OF" not in markdown


async def _collect(communicator, quiet=1.0):
    received = []
    while not await communicator.receive_nothing(timeout=quiet):
        received.append(await communicator.receive_from())
    return "".join(received)


def _watch_a_private_step(debate, user, socket):
    """Connect `user` at `socket`, then run one private step and one public step through the broadcaster:
    (the catch-up, what was pushed)."""

    async def go():
        communicator = WebsocketCommunicator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)), f"{socket}?since=0")
        communicator.scope["user"] = user
        connected, _ = await communicator.connect()
        assert connected
        catch_up = await communicator.receive_from()
        broadcaster = DebateBroadcaster(debate.pk)
        fresh = await sync_to_async(Debate.objects.get)(pk=debate.pk)
        await broadcaster.debate_changed(fresh)
        think = Step(ordinal=7, kind="THINK", step="think", seat="b", visibility="private", messages=({},))
        broadcaster.step_started(fresh, think)
        broadcaster.delta(fresh, think, "STREAMED-SECRET")
        seat = await sync_to_async(Seat.objects.get)(debate=debate, key="b")
        event = await sync_to_async(Event.objects.create)(
            debate=debate,
            ordinal=7,
            seat=seat,
            kind="THINK",
            step="think",
            visibility="private",
            content="SAVED-SECRET of Bob",
        )
        await broadcaster.event_saved(fresh, event)
        turn = Step(ordinal=8, kind="TURN", step="respond", seat="b", messages=({},))
        broadcaster.step_started(fresh, turn)
        broadcaster.delta(fresh, turn, "PUBLIC-TOKENS")
        await broadcaster.drain()
        pushed = await _collect(communicator)
        await communicator.disconnect()
        return catch_up, pushed

    return asyncio.run(go())


@pytest.mark.parametrize("show", [True, False], ids=["shown", "hidden"])
@pytest.mark.parametrize("who", list(VIEWERS))
def test_the_socket_catch_up_and_pushes_follow_the_same_rule(people, who, show):
    visibility, via_share = VIEWERS[who]
    debate = make_duel(people["owner"], visibility, show)
    _, socket, _ = addresses(debate, via_share)
    reads_thinking = who in INSIDERS or show

    catch_up, pushed = _watch_a_private_step(debate, viewer(people, who), socket)

    assert "Cars must go." in catch_up
    assert ("SECRET-PLAN of Ada" in catch_up) is reads_thinking and (PLACEHOLDER in catch_up) is not reads_thinking
    assert "INTERNAL-JSON" not in catch_up
    # Public tokens stream to everyone; private ones only to the owner's and staff's pages.
    assert "PUBLIC-TOKENS" in pushed
    assert ("STREAMED-SECRET" in pushed) is (who in INSIDERS)
    assert ("SAVED-SECRET of Bob" in pushed) is reads_thinking
    assert 'id="ev-7"' in pushed
    assert (PLACEHOLDER in pushed) is not reads_thinking


def test_the_owner_changes_the_choice_on_the_page_and_open_pages_follow(people):
    debate = make_duel(people["owner"], "public", show_thinking=True)
    owner = client_for(people, "owner")
    page = owner.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert reverse("debate_thinking", args=[debate.pk]) in page and 'name="show_thinking" checked' in page

    async def go():
        communicator = WebsocketCommunicator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns)), f"/ws/debates/{debate.pk}/?since=0"
        )
        communicator.scope["user"] = people["other"]
        await communicator.connect()
        await communicator.receive_from()  # the catch-up
        response = await sync_to_async(owner.post)(reverse("debate_thinking", args=[debate.pk]), {})
        assert response.status_code == 302
        hidden = await _collect(communicator)
        await sync_to_async(owner.post)(reverse("debate_thinking", args=[debate.pk]), {"show_thinking": "on"})
        shown = await _collect(communicator)
        await communicator.disconnect()
        return hidden, shown

    hidden, shown = asyncio.run(go())
    assert 'id="ev-1"' in hidden and PLACEHOLDER in hidden and "SECRET-PLAN" not in hidden
    assert "SECRET-PLAN of Ada" in shown and PLACEHOLDER not in shown
    assert "INTERNAL-JSON" not in hidden + shown and 'id="ev-29"' not in hidden + shown
    assert Debate.objects.get(pk=debate.pk).show_thinking is True


@pytest.mark.parametrize("who", ["other", "staff", "anonymous"])
def test_only_the_owner_changes_the_choice(people, who):
    debate = make_duel(people["owner"], "public", show_thinking=True)
    response = client_for(people, who).post(reverse("debate_thinking", args=[debate.pk]), {})
    assert response.status_code == {"other": 403, "staff": 403, "anonymous": 302}[who]
    assert Debate.objects.get(pk=debate.pk).show_thinking is True
    page = client_for(people, who).get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert reverse("debate_thinking", args=[debate.pk]) not in page


def test_the_new_debate_form_offers_the_choice_checked(people, llm_server):
    from chaoslm.runner import inline
    from personas.models import import_personas

    import_personas(
        [
            ("a.yaml", "name: Ann\nrole: debater\npersonality: Ann speaks.\n"),
            ("b.yaml", "name: Ben\nrole: debater\npersonality: Ben speaks.\n"),
        ]
    )
    client = client_for(people, "owner")
    form = client.get(reverse("debate_new")).content.decode()
    assert 'name="show_thinking"' in form and 'id="id_show_thinking" checked' in form
    from personas.models import Persona

    ann, ben = Persona.objects.get(name="Ann"), Persona.objects.get(name="Ben")
    fields = {"format": "duel", "topic": "Tea?", "seat_a": ann.pk, "seat_b": ben.pk, "visibility": "unlisted"}
    fields |= {"option_turns": 2, "option_word_limit": 0}
    client.post(reverse("debate_new"), fields)  # unchecked: the browser sends no field
    client.post(reverse("debate_new"), {**fields, "show_thinking": "on"})
    inline.wait_idle()
    assert list(Debate.objects.order_by("pk").values_list("show_thinking", flat=True)) == [False, True]
