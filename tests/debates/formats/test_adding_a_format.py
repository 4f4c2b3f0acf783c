"""Adding a format is one module and one registry line (docs/adding-a-format.md): a tiny format, registered only
here, runs end to end through the engine against the test server, and its page shows its own words."""

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from debates.formats import registered
from debates.formats.base import PUBLIC, DebateConfig, Format, Plan, Record, SeatSpec, Step, StepBuilder

TOAST = "Propose a one-sentence toast on: {topic}"
REPLY = 'Answer this toast in one sentence: "{toast}"'


class Toast(Format):
    """A host proposes a toast and a guest answers it: a SYSTEM line, then two calls, the second reading the first."""

    name = "toast"
    title = "Toast"
    description = "A host proposes a toast; a guest answers it."
    scores_turns = False
    seat_specs = (SeatSpec("host", "debater", "Host"), SeatSpec("guest", "debater", "Guest"))
    doing_words = {"toast": "proposing a toast", "reply": "answering the toast"}

    def next_steps(self, config: DebateConfig, records: Sequence[Record]) -> Plan:
        done = {r.ordinal: r for r in records}
        if 0 not in done:
            return Plan(steps=(self.header(config),))
        if 1 not in done:
            return Plan(steps=(Step(ordinal=1, kind="SYSTEM", step="start", content="[SYSTEM]: Glasses up."),))
        if 3 in done:
            return Plan(finished=True)
        build = StepBuilder(config, records)
        build.call("host", 2, "TURN", "toast", TOAST.format(topic=config.topic), visibility=PUBLIC)
        if 2 in done:
            build.call("guest", 3, "TURN", "reply", REPLY.format(toast=done[2].content), needs=(2,), visibility=PUBLIC)
        return Plan(steps=tuple(build.steps))

    def ended_early(self, options: Mapping[str, Any], statements: int) -> str:
        return "The toast was cut short."


@pytest.fixture
def toast():
    # The registry line, for this test only: debates/formats/__init__.py lists a real format's instance in FORMATS.
    with registered(Toast()) as fmt:
        yield fmt


@pytest.mark.django_db(transaction=True)
def test_a_new_format_runs_through_the_engine_and_renders_its_page(toast, llm_server, run_to_rest, client):
    import re

    from django.contrib.auth import get_user_model
    from django.urls import reverse

    from debates.models import Debate, Event
    from debates.setup import SeatChoice, create_debate
    from debates.status import activity
    from personas.models import import_personas

    persona = "name: {n}\nrole: debater\npersonality: {n} raises a glass.\n"
    host, guest = import_personas([("h.yaml", persona.format(n="Hal")), ("g.yaml", persona.format(n="Gus"))])
    owner = get_user_model().objects.create_user("olive", password="pw-olive-123")
    debate = create_debate(
        format_name="toast",
        topic="Friday",
        seats={"host": SeatChoice(host), "guest": SeatChoice(guest)},
        owner=owner,
    )
    llm_server.configure(
        rules=[
            {"match": re.escape("Propose a one-sentence toast"), "reply": "To Friday!"},
            {"match": re.escape("Answer this toast"), "reply": "And to the weekend!"},
        ]
    )
    debate = run_to_rest(debate.pk)
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    # The exact prompts, in order; the guest's reads the host's toast.
    assert [r.messages[-1]["content"] for r in llm_server.requests] == [
        "Propose a one-sentence toast on: Friday",
        'Answer this toast in one sentence: "To Friday!"',
    ]
    events = list(Event.objects.filter(debate=debate).order_by("ordinal").values_list("kind", "step", "content"))
    assert events[1:] == [
        ("SYSTEM", "start", "[SYSTEM]: Glasses up."),
        ("TURN", "toast", "To Friday!"),
        ("TURN", "reply", "And to the weekend!"),
    ]
    client.force_login(owner)
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert '<p class="muted">Toast · ' in html
    assert '<p class="system-line">Glasses up.</p>' in html  # the base hook drops the models' marker
    assert "To Friday!" in html and "And to the weekend!" in html
    # Its hooks speak on the status line.
    assert activity("Hal", Step(ordinal=2, kind="TURN", step="toast", seat="host"), Toast(), {}) == (
        "Hal is proposing a toast"
    )
    Debate.objects.filter(pk=debate.pk).update(is_ending=True)
    html = client.get(reverse("debate_detail", args=[debate.pk])).content.decode()
    assert '<span class="muted">· The toast was cut short.</span>' in html.split('id="status"')[1].split("</div>")[0]
