"""Migration 0013: a person's messages stored as step "human" (before they were stored as the speech they give)
are given that speech's step, so the JSON export, the API and their cards label them as a model's speech is."""

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from debates.formats.base import PERSON_STEP
from debates.models import Debate, Event
from debates.services import post_message
from debates.setup import SeatChoice, create_debate
from personas.models import Persona

BEFORE = [("debates", "0012_debate_stop_requested")]
AFTER = [("debates", "0013_person_message_steps")]


def _migrate(targets: list[tuple[str, str]]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


@pytest.mark.django_db(transaction=True)
def test_old_person_messages_get_the_step_they_gave_and_free_messages_keep_human(client, llm_server, run_to_rest):
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    client.force_login(owner)
    neg = Persona.objects.create(name="Marcus Vale", role="debater", personality="Marcus argues.")
    debate = create_debate(
        format_name="lincoln-douglas",
        topic="Should voting be compulsory?",
        premise="Voting should be compulsory",
        seats={"aff": SeatChoice(human_name="olive"), "neg": SeatChoice(neg)},
        options={"questions": 1},
        owner=owner,
        card_source=Path("cards/lincoln-douglas.yaml").read_text(),
    )
    for text in ("My case.", "My answer.", "My question."):
        debate = run_to_rest(debate.pk)
        assert debate.status == Debate.Status.WAITING
        post_message(debate.pk, text)
    # A moderated discussion's message answers no step: it keeps "human".
    free = Debate.objects.create(topic="Cars?", format="standard", owner=owner)
    seat = free.seats.create(key="aff", role="debater", side="aff", name="olive", is_human=True)
    Event.objects.create(debate=free, ordinal=1, seat=seat, kind="USER", step=PERSON_STEP, content="Hello.")

    _migrate(BEFORE)
    # As such messages were stored before: step "human", their card drawn without a speech's label.
    Event.objects.filter(debate=debate, kind="USER").update(step=PERSON_STEP, html="<article>old</article>")
    _migrate(AFTER)

    events = json.loads(client.get(reverse("debate_export", args=[debate.pk, "json"])).content)["events"]
    spoken = [(e["content"], e["step"], e["label"]) for e in events if e["kind"] == "USER"]
    assert spoken == [
        ("My case.", "affirmative_constructive", "affirmative constructive (1AC)"),
        ("My answer.", "aff_answer_1", "affirmative answer 1"),
        ("My question.", "aff_question_1", "affirmative question 1"),
    ]
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert '<span class="muted">· affirmative constructive (1AC)</span>' in html
    assert "<article>old</article>" not in html
    assert list(free.events.values_list("step", flat=True)) == [PERSON_STEP]
