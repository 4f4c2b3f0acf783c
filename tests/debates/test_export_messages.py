"""The JSON export's `?messages=1`: each model call's event carries the messages it was sent, the very ones the
model's server received over HTTP, for the owner alone; a share link's reader never gets them."""

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from debates.models import Debate
from debates.setup import SeatChoice, create_debate
from personas.models import Persona

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("format_name", ["lincoln-douglas", "duel"])
def test_every_calls_exported_messages_are_the_ones_the_server_received(llm_server, run_to_rest, format_name):
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    aff = Persona.objects.create(name="Ada Sterling", role="debater", personality="Ada argues.")
    neg = Persona.objects.create(name="Marcus Vale", role="debater", personality="Marcus argues.")
    judge = Persona.objects.create(name="Judge Okafor", role="judge", personality="Okafor weighs.")
    card = format_name == "lincoln-douglas"
    debate = create_debate(
        format_name=format_name,
        topic="Should voting be compulsory?",
        premise="Voting should be compulsory",
        seats={
            "aff" if card else "a": SeatChoice(aff),
            "neg" if card else "b": SeatChoice(neg),
            "judge": SeatChoice(judge),
        },
        options={"questions": 1} if card else {"turns": 2},
        owner=owner,
        card_source=Path("cards/lincoln-douglas.yaml").read_text() if card else "",
    )
    assert run_to_rest(debate.pk).status == Debate.Status.COMPLETED
    client = Client()
    client.force_login(owner)
    url = reverse("debate_export", args=[debate.pk, "json"])

    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert f'<a href="{url}?messages=1">JSON with every call\'s messages</a>' in page
    events = json.loads(client.get(url + "?messages=1").content)["events"]
    calls = [e for e in events if e["prompt"]]
    received = [r.body["messages"] for r in llm_server.requests]
    assert len(calls) == len(received) > 10
    # Each call's messages are one request's, whole: its system prompt, the transcript it saw, its prompt last.
    for call in calls:
        assert call["messages"] in received, call["step"]
        last = call["messages"][-1]
        assert last["role"] == "user" and last["content"].endswith(call["prompt"]), call["step"]
    assert len({json.dumps(c["messages"]) for c in calls}) == len(calls)

    assert all("messages" not in e for e in json.loads(client.get(url).content)["events"])
    Debate.objects.filter(pk=debate.pk).update(visibility="unlisted")
    shared = reverse("debate_share_export", args=[debate.share_token, "json"])
    assert "messages=1" not in Client().get(reverse("debate_share", args=[debate.share_token])).content.decode()
    answer = Client().get(shared + "?messages=1")
    assert answer.status_code == 200
    assert all("messages" not in e and "prompt" not in e for e in json.loads(answer.content)["events"])
