"""What a room's page and exports say about the model that wrote a message, as a debate's do
(tests/debates/test_model_words.py): a reply the model's token limit cut off mid-word is marked as cut, and a reply
the embedded model wrote names it, from what its call recorded. Run through the engine and the real openai client
against the test server (the embedded model's endpoint served by it at the embedded model's host and port)."""

from __future__ import annotations

import asyncio
import json

import pytest
from django.test import Client

from api import tokens
from personas.models import Persona, import_personas
from rooms import services
from rooms.engine import manual_round
from rooms.models import Room, RoomMessage

pytestmark = pytest.mark.django_db(transaction=True)

CUT = "Cars clog every street we have and the air they leave beh"
WRITTEN = "· written by the embedded SmolLM2-135M model</span>"
LINE = "Written by the embedded SmolLM2-135M model (for trying ChaosLM offline)."


def card_of(page: str, message: RoomMessage) -> str:
    return page[page.index(f'id="msg-{message.pk}"') :].split("</article>", 1)[0]


def api_messages(client: Client, room) -> list[dict]:
    bearer = f"Bearer {tokens.create_token(room.owner, 'test', read_only=True)[1]}"
    response = client.get(f"/api/v1/rooms/{room.pk}", HTTP_AUTHORIZATION=bearer)
    assert response.status_code == 200
    return response.json()["messages"]


def test_a_reply_cut_off_at_its_token_limit_is_marked_on_its_card_exports_and_api(room, llm_server, client):
    # Alice's answer ends as a model cut off by max_tokens ends it: mid-word, finish_reason "length".
    llm_server.configure(rules=[{"match": "Cars or bikes", "reply": CUT, "finish_reason": "length"}])
    alice = room.agents.get(name="Alice")
    services.post_message(room, "olive", "Cars or bikes?", to=[alice.pk])  # a whisper: only Alice answers it
    asyncio.run(manual_round(room.pk))
    services.submit_pending(room, set(room.messages.filter(kind="pending").values_list("pk", flat=True)))
    services.post_message(room, "olive", "Thanks, anyone else?")
    asyncio.run(manual_round(room.pk))
    services.submit_pending(room, set(room.messages.filter(kind="pending").values_list("pk", flat=True)))

    cut = room.messages.get(author="Alice", content=CUT)
    tokens_written = len(CUT.split())
    assert cut.data["cut_at_tokens"] == cut.tokens_out == tokens_written
    # The answers to the second message ended of themselves: no mark.
    others = room.messages.filter(kind="agent").exclude(pk=cut.pk)
    assert others.count() == 3 and not any("cut_at_tokens" in m.data for m in others)

    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert (
        '<span class="muted cut-note" title="The model reached its token limit (max_tokens) and stopped mid-reply">'
        f"· cut off at {tokens_written} tokens</span>"
    ) in card_of(page, cut)
    assert page.count("cut off at") == 1

    markdown = client.get(f"/rooms/{room.pk}/export.md").content.decode()
    assert f"**Alice** (cut off at {tokens_written} tokens, the model's token limit):\n\n{CUT}\n" in markdown
    assert markdown.count("cut off at") == 1
    exported = json.loads(client.get(f"/rooms/{room.pk}/export.json").content)
    assert [m.get("cut_at_tokens") for m in exported["messages"] if m["kind"] == "agent"] == [tokens_written] + [
        None
    ] * 3
    shown = next(m for m in api_messages(client, room) if m["id"] == cut.pk)
    assert shown["cut_at_tokens"] == tokens_written


def test_a_reply_the_embedded_model_wrote_names_it_on_its_card_exports_and_api(embedded, room, llm_server, client):
    services.post_message(room, "olive", "Hello all")
    asyncio.run(manual_round(room.pk))
    assert {r.body["model"] for r in llm_server.requests} == {"smollm2-135m"}
    pending = list(room.messages.filter(kind="pending"))
    # A pending answer says so before it is kept, as every card does.
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert all(WRITTEN in card_of(page, m) for m in pending) and len(pending) == 3
    assert f'<p class="model-line muted">{LINE}</p>' in page  # at the page's head, as a debate's page says it
    services.submit_pending(room, {m.pk for m in pending})
    # Read after the settings name another endpoint: what the page says comes from the messages' own calls.
    embedded.OPENAI_BASE_URL = llm_server.url
    embedded.OPENAI_API_KEY = "test-key"

    page = client.get(f"/rooms/{room.pk}/").content.decode()
    answers = list(room.messages.filter(kind="agent"))
    assert [m.data["embedded_model"] for m in answers] == ["SmolLM2-135M"] * 3
    assert all(WRITTEN in card_of(page, m) for m in answers)
    person = room.messages.get(kind="user")
    assert "embedded" not in card_of(page, person)
    Room.objects.filter(pk=room.pk).update(visibility=Room.Visibility.UNLISTED)
    share = Client().get(f"/r/{room.share_token}/").content.decode()  # logged out
    assert all(WRITTEN in card_of(share, m) for m in answers)
    assert share.count(LINE) == 1 and page.count(LINE) == 1

    markdown = client.get(f"/rooms/{room.pk}/export.md").content.decode()
    assert f"Chat room · turn order: round robin (the order they joined)\n\n*{LINE}*\n\n## Agents" in markdown
    assert "**Alice** (written by the embedded SmolLM2-135M model):\n\n" in markdown
    assert markdown.count("written by the embedded SmolLM2-135M model") == 3
    exported = json.loads(client.get(f"/rooms/{room.pk}/export.json").content)
    assert [m.get("embedded_model") for m in exported["messages"] if m["kind"] == "agent"] == ["SmolLM2-135M"] * 3
    assert exported["written_by_embedded"] == LINE
    assert {m["embedded_model"] for m in api_messages(client, room) if m["kind"] == "agent"} == {"SmolLM2-135M"}


def test_a_reply_another_model_wrote_says_nothing_of_the_embedded_one(room, llm_server, client):
    services.post_message(room, "olive", "Hello all")
    asyncio.run(manual_round(room.pk))
    services.submit_pending(room, set(room.messages.filter(kind="pending").values_list("pk", flat=True)))
    assert not any("embedded_model" in m.data for m in room.messages.all())
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert "model-note" not in page and "cut-note" not in page and "model-line" not in page
    assert "embedded" not in client.get(f"/rooms/{room.pk}/export.md").content.decode()
    assert json.loads(client.get(f"/rooms/{room.pk}/export.json").content)["written_by_embedded"] is None


def test_a_room_the_embedded_model_wrote_part_of_says_whose_answers(owner, client):
    import_personas([(f"{n}.yaml", f"name: {n}\nrole: chat\npersonality: You are {n}.\n") for n in ("Ann", "Bo")])
    room = services.create_room(owner, "Chat", "private", Persona.objects.filter(name__in=["Ann", "Bo"]))
    for agent in room.agents.all():
        data = {"embedded_model": "SmolLM2-135M"} if agent.name == "Ann" else {"model": "gpt-4o-mini"}
        RoomMessage.objects.create(
            room=room, kind="agent", agent=agent, author=agent.name, content="Hi", tokens_in=9, data=data
        )
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert "Ann: written by the embedded SmolLM2-135M model (for trying ChaosLM offline)." in page
    assert LINE not in page


def test_the_marks_are_escaped_on_the_page(owner, client):
    import_personas([("Alice.yaml", "name: Alice\nrole: chat\npersonality: You are Alice.\n")])
    room = services.create_room(owner, "Chat", "private", Persona.objects.filter(name="Alice"))
    alice = room.agents.get()
    RoomMessage.objects.create(
        room=room, kind="agent", agent=alice, author="Alice", content="Hi", data={"embedded_model": "<b>x</b>.gguf"}
    )
    page = client.get(f"/rooms/{room.pk}/").content.decode()
    assert "· written by the embedded &lt;b&gt;x&lt;/b&gt;.gguf model</span>" in page and "<b>x</b>" not in page
