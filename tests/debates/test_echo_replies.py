"""A judge's reply that only gives its prompt back is an invalid reply: asked again, as invalid JSON is, and never
shown as the judge's words. End to end: the `debate` command against the test server, through the real client,
the server answering the judge's score with the prompt's own example sentence, or its announcement with its own
instructions."""

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from debates import transcripts
from debates.models import ECHOED, Debate

pytestmark = pytest.mark.django_db(transaction=True)

SAMPLES = Path(__file__).resolve().parents[2] / "personas" / "samples"
SCORE_FIRST = "Give Ada Sterling an initial score out of 10"
EXAMPLE = '{"score": 7, "reasoning": "One sentence explaining the score."}'
ANNOUNCE = "Now deliver your verdict to the debaters and audience, briefly."
ECHO = "Now deliver your verdict to the debaters and audience, briefly. State who won, what they did well."


def duel(llm_server, rules: list[dict]) -> Debate:
    get_user_model().objects.create_user("admin", password="pw-admin-123")  # the command's default owner
    call_command("import_personas", str(SAMPLES), stdout=StringIO())
    llm_server.configure(rules=rules)
    args = ["duel", "--topic", "Should cities ban private cars?", "--turns", "1", "--visibility", "unlisted"]
    args += ["--a", "Ada Sterling", "--b", "Marcus Vale", "--judge", "Judge Ines Okafor"]
    call_command("debate", *args, stdout=StringIO())
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED
    return debate


def asked(llm_server, start: str) -> int:
    return sum(1 for r in llm_server.requests if r.last_user.startswith(start))


def test_a_score_whose_reasoning_is_the_prompts_example_is_asked_again(llm_server):
    debate = duel(llm_server, [{"match": SCORE_FIRST, "reply": EXAMPLE, "times": 1}])
    assert asked(llm_server, SCORE_FIRST) == 2  # the echo, then a reply of its own
    score = debate.events.get(kind="SCORE", data__for_name="Ada Sterling")
    assert score.data["reasoning"] and "One sentence explaining the score" not in score.data["reasoning"]
    owner = Client()
    owner.force_login(debate.owner)
    page = owner.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert "One sentence explaining the score" not in page
    assert f"Ada Sterling</strong>: {score.data['reasoning']}" in page


def test_a_score_that_stays_an_echo_falls_back_and_its_example_is_shown_nowhere(llm_server):
    debate = duel(llm_server, [{"match": SCORE_FIRST, "reply": EXAMPLE}])
    assert asked(llm_server, SCORE_FIRST) == 3  # the gateway's three attempts
    score = debate.events.get(kind="SCORE", data__for_name="Ada Sterling")
    assert score.data["fallback"] is True and score.data["echoed"] is True
    assert "gives its prompt back" in score.data["error"]
    shared = Client().get(reverse("debate_share", args=[debate.share_token])).content.decode()
    assert "One sentence explaining the score" not in shared
    assert "One sentence explaining the score" not in transcripts.as_markdown(debate)


def test_an_announcement_that_only_gives_its_instructions_back_is_not_shown_as_the_judges(llm_server):
    debate = duel(llm_server, [{"match": ANNOUNCE, "reply": ECHO}])
    assert asked(llm_server, ANNOUNCE) == 3
    # The verdict itself is the judge's own: a winner, no fallback; only its announcement is missing, and the
    # card says why, where it would have repeated the prompt.
    assert debate.winner in ("Ada Sterling", "Marcus Vale")
    assert debate.announcement == ""
    verdict = debate.events.get(kind="VERDICT")
    assert verdict.content == "" and verdict.data["echoed"] is True
    shared = Client().get(reverse("debate_share", args=[debate.share_token])).content.decode()
    assert ECHOED in shared
    assert "State who won, what they did well" not in shared
    assert "Not the judge's own verdict" not in shared
    assert transcripts.as_dict(debate)["verdict"]["fallback"] is None
    assert "State who won, what they did well" not in transcripts.as_markdown(debate)


def test_an_announcement_in_its_own_words_is_asked_once(llm_server):
    debate = duel(llm_server, [])
    assert asked(llm_server, ANNOUNCE) == 1
    assert debate.announcement
