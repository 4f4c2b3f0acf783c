"""What a debate's pages and exports say about the model that wrote it: a debate the embedded model wrote says so,
from what its calls recorded, and a reply the model's token limit cut off mid-word is marked as cut, as a word-limit
cut is. Run through the engine and the real openai client against the test server (the embedded model's endpoint
served by it at the embedded model's host and port)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from api import tokens
from debates.models import Debate, Event
from debates.setup import SeatChoice, create_debate
from debates.transcripts import as_json, as_markdown
from personas.models import Persona, Provider, import_personas

pytestmark = pytest.mark.django_db(transaction=True)

PERSONAS = Path(__file__).resolve().parents[2] / "personas" / "samples"
CUT = "Cars clog every street we have and the air they leave beh"


@pytest.fixture
def personas(people):
    files = ["ada-sterling.yaml", "marcus-vale.yaml"]
    saved = import_personas([(f, (PERSONAS / f).read_text()) for f in files])
    return {p.name: p for p in saved}


def duel(personas, owner) -> Debate:
    seats = {"a": SeatChoice(personas["Ada Sterling"]), "b": SeatChoice(personas["Marcus Vale"])}
    return create_debate(
        format_name="duel",
        topic="Should cities ban private cars?",
        premise="Cities should ban private cars",
        seats=seats,
        options={"turns": 2},
        owner=owner,
    )


WRITTEN = "Written by the embedded SmolLM2-135M model (for trying ChaosLM offline)."


def api_detail(client, user, debate) -> dict:
    bearer = f"Bearer {tokens.create_token(user, 'test', read_only=True)[1]}"
    return client.get(f"/api/v1/debates/{debate.pk}", HTTP_AUTHORIZATION=bearer).json()


def test_a_debate_the_embedded_model_wrote_says_so_on_every_page_export_and_the_api(
    embedded, llm_server, personas, people, run_to_rest, client
):
    debate = duel(personas, people["owner"])
    Debate.objects.filter(pk=debate.pk).update(visibility=Debate.Visibility.UNLISTED)
    assert run_to_rest(debate.pk).status == Debate.Status.COMPLETED
    assert {r.body["model"] for r in llm_server.requests} == {"smollm2-135m"}
    # Read after the settings name another endpoint: what the page says comes from the debate's own calls.
    embedded.OPENAI_BASE_URL = llm_server.url
    embedded.OPENAI_API_KEY = "test-key"

    share = client.get(reverse("debate_share", args=[debate.share_token])).content.decode()  # logged out
    assert f'<p class="model-line muted">{WRITTEN}</p>' in share
    client.force_login(people["owner"])
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert f'<p class="model-line muted">{WRITTEN}</p>' in page
    markdown = client.get(reverse("debate_export", args=[debate.pk, "md"])).content.decode()
    assert "**Format:** Judged duel" in markdown and f"\n\n*{WRITTEN}*\n\n" in markdown
    exported = json.loads(client.get(reverse("debate_export", args=[debate.pk, "json"])).content)
    assert exported["written_by_embedded"] == WRITTEN
    assert [(s["name"], s["embedded_model"]) for s in exported["seats"]] == [
        ("Ada Sterling", "SmolLM2-135M"),
        ("Marcus Vale", "SmolLM2-135M"),
    ]
    detail = api_detail(client, people["owner"], debate)
    assert detail["written_by_embedded"] == WRITTEN
    assert [s["embedded_model"] for s in detail["seats"]] == ["SmolLM2-135M", "SmolLM2-135M"]


def test_a_debate_the_embedded_model_wrote_in_part_names_the_seats_it_wrote_for(
    embedded, llm_server, personas, people, run_to_rest, client
):
    # Marcus speaks through a provider of his own (the same test server, by another name): not the embedded model.
    provider = Provider.objects.create(name="Elsewhere", base_url=llm_server.url, default_model="elsewhere-model")
    Persona.objects.filter(name="Marcus Vale").update(provider=provider)
    personas["Marcus Vale"].refresh_from_db()
    debate = duel(personas, people["owner"])
    assert run_to_rest(debate.pk).status == Debate.Status.COMPLETED
    line = "Ada Sterling: written by the embedded SmolLM2-135M model (for trying ChaosLM offline)."
    client.force_login(people["owner"])
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert f'<p class="model-line muted">{line}</p>' in page and "Written by" not in page
    assert f"\n\n*{line}*\n\n" in as_markdown(debate)
    assert api_detail(client, people["owner"], debate)["written_by_embedded"] == line


def test_a_debate_another_model_wrote_says_nothing_of_the_embedded_one(
    llm_server, personas, people, run_to_rest, client
):
    debate = duel(personas, people["owner"])
    assert run_to_rest(debate.pk).status == Debate.Status.COMPLETED
    client.force_login(people["owner"])
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "model-line" not in page and "embedded" not in as_markdown(debate)
    assert json.loads(as_json(debate))["written_by_embedded"] is None


def test_a_reply_cut_off_at_its_token_limit_is_marked_on_its_card_exports_and_api(
    llm_server, personas, people, run_to_rest, client
):
    # Ada's opening statement ends as a model cut off by max_tokens ends it: mid-word, finish_reason "length".
    llm_server.configure(rules=[{"match": "Deliver your opening argument", "reply": CUT, "finish_reason": "length"}])
    debate = duel(personas, people["owner"])
    assert run_to_rest(debate.pk).status == Debate.Status.COMPLETED
    opening = Event.objects.get(debate=debate, step="opening")
    asked = next(r for r in llm_server.requests if "Deliver your opening argument" in r.last_user)
    assert asked.body["max_tokens"] == 400  # Ada's persona's cap, which the model reached
    tokens_written = len(CUT.split())
    assert opening.content == CUT
    assert opening.data["cut_at_tokens"] == opening.tokens_out == tokens_written
    # Marcus's reply ended of itself: no mark.
    answer = Event.objects.get(debate=debate, step="respond_final")
    assert "cut_at_tokens" not in answer.data

    client.force_login(people["owner"])
    page = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    card = page[page.index('id="ev-4"') :].split("</article>", 1)[0]
    assert f"· cut off at {tokens_written} tokens</span>" in card
    assert page.count("cut off at") == 1

    markdown = as_markdown(debate)
    assert f"{CUT}\n\n*(cut off at {tokens_written} tokens, the model's token limit)*\n" in markdown
    assert markdown.count("cut off at") == 1
    exported = next(e for e in json.loads(as_json(debate))["events"] if e["step"] == "opening")
    assert exported["data"]["cut_at_tokens"] == tokens_written

    bearer = f"Bearer {tokens.create_token(people['owner'], 'test', read_only=True)[1]}"
    detail = client.get(f"/api/v1/debates/{debate.pk}", HTTP_AUTHORIZATION=bearer).json()
    shown = next(e for e in detail["events"] if e["step"] == "opening")
    assert shown["data"]["cut_at_tokens"] == tokens_written
