"""Seat groups in the card language (docs/cards.md, "Seat groups"): `{key: agent, label: Agent, count: agents}` is
the seats agent_1..agent_N, N the option's value. Each test asserts what the group changes: the seats and their
labels, who speaks and exactly what each is asked (a debate run by the `debate` command against the test server),
the call counts, the refusals of seats that do not match the option (every problem at once, nothing stored), and
`seat: agent` naming the whole group."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils.html import escape

from api.tokens import create_token
from batches.checks import BatchError, Checks, Contestant
from comparisons.arms import ArmRequest, resolve
from debates.formats.base import DebateConfig, FormatError, SeatInfo
from debates.formats.card import CardError, parse_card
from debates.formats.card.doc import protocol_markdown
from debates.models import Debate
from personas.models import Persona, import_personas
from tests.batches.helpers import debater
from tests.comparisons.helpers import import_shipped_cards

CARDS = Path(__file__).resolve().parents[2] / "cards"

GROUP = """
name: table
title: Table
options:
  agents: {label: Agents, default: 3, min: 2, max: 4}
  rounds: {label: Rounds, default: 2, min: 1, max: 3}
seats:
  - {key: host, role: moderator, label: Host}
  - {key: agent, role: debater, label: Agent, count: agents}
stages:
  - system: "[SYSTEM]: {host} opens; first {agent_1}, then {agent_2}."
    seat: host
  - plan: notes
    seat: agent
    prompt: "Notes on {topic}, {speaker}."
  - repeat: rounds
    stages:
      - speech: turn
        seat: agent
        prompt: "Round {round}: your turn, {speaker}."
"""

# The same protocol with its three agents listed by hand: a group of three must lay out exactly as this does.
LISTED = """
name: table
title: Table
options:
  rounds: {label: Rounds, default: 2, min: 1, max: 3}
seats:
  - {key: host, role: moderator, label: Host}
  - {key: agent_1, role: debater, label: Agent 1}
  - {key: agent_2, role: debater, label: Agent 2}
  - {key: agent_3, role: debater, label: Agent 3}
stages:
  - system: "[SYSTEM]: {host} opens; first {agent_1}, then {agent_2}."
    seat: host
  - plan: notes
    seat: [agent_1, agent_2, agent_3]
    prompt: "Notes on {topic}, {speaker}."
  - repeat: rounds
    stages:
      - speech: turn
        seat: [agent_1, agent_2, agent_3]
        prompt: "Round {round}: your turn, {speaker}."
"""


def shipped(name: str):
    return parse_card((CARDS / f"{name}.yaml").read_text())


def seated(card, keys, options):
    return DebateConfig(
        format=card.name,
        topic="What is 2+3*4?",
        options=options,
        seats=tuple(SeatInfo(k, "debater", f"Speaker {k}") for k in keys),
    )


def plan_of(card, options):
    return [(c.seat, c.step, c.round) for c in card.plan(options) if c.calls_llm or c.kind == "SYSTEM"]


# --- the expansion ---------------------------------------------------------------------------------------------------


def test_a_group_is_numbered_seats_required_up_to_the_option_s_minimum_and_optional_up_to_its_maximum():
    card = parse_card(GROUP)
    assert [(s.key, s.label, s.role, s.required) for s in card.seat_specs] == [
        ("host", "Host", "moderator", True),
        ("agent_1", "Agent 1", "debater", True),
        ("agent_2", "Agent 2", "debater", True),
        ("agent_3", "Agent 3", "debater", False),
        ("agent_4", "Agent 4", "debater", False),
    ]
    # A debate's seats follow its option: the group's first N, each of them required; the host as ever.
    assert [(s.key, s.required) for s in card.seats_for({"agents": 3})] == [
        ("host", True),
        ("agent_1", True),
        ("agent_2", True),
        ("agent_3", True),
    ]
    assert [s.key for s in card.seats_for({})] == ["host", "agent_1", "agent_2", "agent_3"]  # the default, 3
    assert [s.key for s in card.seats_for({"agents": 2})] == ["host", "agent_1", "agent_2"]
    assert [s.key for s in card.seats_for({"agents": 4})] == ["host", "agent_1", "agent_2", "agent_3", "agent_4"]


def test_the_shipped_agent_cards_are_a_group_of_three_to_five_agents_by_the_option_agents():
    for name in ("multi-agent-debate", "self-consistency"):
        card = shipped(name)
        agents = next(o for o in card.option_specs if o.name == "agents")
        assert (agents.minimum, agents.default, agents.maximum) == (3, 3, 5)
        assert [(s.key, s.label, s.required) for s in card.seat_specs] == [
            (f"agent_{n}", f"Agent {n}", n <= 3) for n in range(1, 6)
        ]
        assert "`agent_1` to `agent_5` are the seat group `agent`" in protocol_markdown(card)


def test_seat_agent_names_the_whole_group_in_order_as_the_list_of_its_seats_does():
    grouped, listed = parse_card(GROUP), parse_card(LISTED)
    for rounds in (1, 2, 3):
        assert plan_of(grouped, {"agents": 3, "rounds": rounds}) == plan_of(listed, {"rounds": rounds})
    # The speech's list is the group's seats that sit: with two agents the turns alternate between two.
    assert plan_of(grouped, {"agents": 2, "rounds": 3}) == [
        ("host", "system", 0),
        ("agent_1", "notes", 0),
        ("agent_2", "notes", 0),
        ("agent_1", "turn", 1),
        ("agent_2", "turn", 2),
        ("agent_1", "turn", 3),
    ]
    assert [s for s, step, _ in plan_of(grouped, {"agents": 4, "rounds": 3}) if step == "notes"] == [
        "agent_1",
        "agent_2",
        "agent_3",
        "agent_4",
    ]


def test_the_calls_and_the_plan_follow_the_option():
    card = shipped("multi-agent-debate")
    for agents in (3, 4, 5):
        options = {"agents": agents, "rounds": 2}
        assert card.calls(options) == card.fewest_calls(options) == agents * 3
        assert card.statements(options) == agents * 3
        assert {c.seat for c in card.plan(options) if c.calls_llm} == {f"agent_{n}" for n in range(1, agents + 1)}
    vote = shipped("self-consistency")
    assert [vote.calls({"agents": n}) for n in (3, 4, 5)] == [3, 4, 5]
    assert vote.calls({}) == 3  # the default


def test_a_group_s_seats_are_placeholders_by_their_keys():
    card = parse_card(GROUP)
    cfg = seated(card, ["host", "agent_1", "agent_2", "agent_3"], {"agents": 3, "rounds": 1})
    line = next(s for s in card.next_steps(cfg, []).steps if s.kind == "SYSTEM")
    assert line.content == "[SYSTEM]: Speaker host opens; first Speaker agent_1, then Speaker agent_2."


def test_a_card_misusing_a_group_is_refused_with_every_problem():
    text = """
name: broken
title: Broken
options:
  agents: {default: 2, min: 2, max: 3}
seats:
  - {key: agent, label: Agent, count: agents, required: false}
  - {key: crowd, label: Crowd, count: people}
  - {key: agent_2}
  - {key: judge, role: judge}
stages:
  - speech: say
    seat: agent
    prompt: "Say it, {agent}."
  - system: "[SYSTEM]: Next."
    seat: agent
judge:
  seat: judge
  score: {prompt: 'Score {scored}: {{"score": 7, "reasoning": "..."}}'}
"""
    with pytest.raises(CardError) as raised:
        parse_card(text)
    messages = [p.message for p in raised.value.problems]
    assert any("leave 'required' out" in m and "minimum of 'agents' (2)" in m for m in messages), messages
    assert any("there is no option 'people'" in m for m in messages), messages
    assert "There are two seats called 'agent_2'." in messages
    assert any(m.startswith("Several seats take turns only inside a repeat") for m in messages), messages
    assert any(m.startswith("Unknown placeholder {agent}") for m in messages), messages
    assert any("'agent' is a group of seats; here name one of them (agent_1, agent_2, agent_3)" in m for m in messages)


# --- a debate of it, against the test server -------------------------------------------------------------------------

REPLY = {"reasoning": "Multiplication first", "answer": "14"}
FORMAT = 'Reply with JSON only: {"reasoning": "your reasoning", "answer": a short answer}'


def personas(keys):
    import_personas(
        [(f"{k}.yaml", f"name: Speaker {k}\nrole: debater\npersonality: Speaker {k} speaks.\n") for k in keys]
    )


def seat_args(keys):
    return [arg for k in keys for arg in ("--seat", f"{k}=Speaker {k}")]


def asked_by_seat(llm_server, keys):
    """Each seat's prompts (the last user message of each of its requests), in the order it was asked."""
    out = {k: [] for k in keys}
    for request in llm_server.requests:
        seat = next(k for k in keys if f"Speaker {k} speaks." in request.system)
        out[seat].append(request.last_user)
    return out


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("agents", [3, 4, 5])
def test_the_option_sets_how_many_agents_speak_and_exactly_what_each_is_asked(llm_server, agents):
    call_command("import_formats", str(CARDS), "--missing", stdout=StringIO())
    keys = [f"agent_{n}" for n in range(1, agents + 1)]
    personas(keys)
    llm_server.configure(rules=[{"match": "", "reply": json.dumps(REPLY)}])
    topic = "What is 2+3*4?"
    options = ["--option", f"agents={agents}", "--option", "rounds=1"]
    call_command("debate", "multi-agent-debate", "--topic", topic, *seat_args(keys), *options, stdout=StringIO())
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert debate.options["agents"] == agents
    assert len(llm_server.requests) == 2 * agents
    first = f"{topic}\n\nMake sure to state your answer at the end of the response. {FORMAT}"

    def updated(key):
        others = "\n\n".join(f"Speaker {k}: {REPLY['reasoning']}\n\nAnswer: 14" for k in keys if k != key)
        return (
            f"These are the recent opinions from other agents:\n\n{others}\n\n"
            "Use these opinions carefully as additional advice: can you provide an updated answer to the question? "
            f"{topic}\nMake sure to state your answer at the end of the response. {FORMAT}"
        )

    assert asked_by_seat(llm_server, keys) == {key: [first, updated(key)] for key in keys}
    assert debate.events.filter(kind="TURN").count() == 2 * agents


# --- refusals --------------------------------------------------------------------------------------------------------


def test_seats_that_do_not_match_the_option_are_refused_with_every_problem_at_once():
    card = shipped("self-consistency")
    cfg = seated(card, ["agent_1", "agent_2", "agent_5"], {"agents": 4})
    with pytest.raises(FormatError) as raised:
        card.validate(cfg)
    assert str(raised.value) == (
        "Agents is 4, so the Agent 3 and Agent 4 seats must be filled. "
        "Agents is 4, so the Agent 5 seat must be empty (or set Agents to 5)."
    )
    # With the default (3), the seats past it must be empty; other problems are told beside the group's.
    cfg = DebateConfig(
        format=card.name,
        topic=" ",
        options={},
        seats=tuple(SeatInfo(f"agent_{n}", "debater", f"S{n}") for n in (1, 2, 3, 4)),
    )
    with pytest.raises(FormatError) as raised:
        card.validate(cfg)
    assert str(raised.value) == (
        "The topic must have at least one non-whitespace character. "
        "Agents is 3, so the Agent 4 seat must be empty (or set Agents to 4)."
    )
    # Seats that match pass, at every value.
    for agents in (3, 4, 5):
        card.validate(seated(card, [f"agent_{n}" for n in range(1, agents + 1)], {"agents": agents}))


@pytest.mark.django_db
def test_the_debate_command_refuses_mismatched_seats_with_every_problem_and_stores_nothing():
    call_command("import_formats", str(CARDS), "--missing", stdout=StringIO())
    keys = ["agent_2", "agent_3", "agent_5"]
    personas(keys)
    with pytest.raises(CommandError) as raised:
        call_command(
            "debate", "multi-agent-debate", "--topic", "T?", *seat_args(keys), "--option", "agents=4", stdout=StringIO()
        )
    assert str(raised.value) == (
        "Agents is 4, so the Agent 1 and Agent 4 seats must be filled.\n"  # the command: a problem a line
        "Agents is 4, so the Agent 5 seat must be empty (or set Agents to 5)."
    )
    assert not Debate.objects.exists()


# --- a comparison's arm ----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_arm_s_agents_set_the_group_s_option():
    import_shipped_cards()
    found = Checks(BatchError)
    ada = Contestant.of(debater("Ada"))
    arms = resolve(
        None,
        [
            ArmRequest("self-consistency", ada, name="four", agents=4),
            ArmRequest("multi-agent-debate", ada, name="five", agents=5, options={"rounds": 1}),
            ArmRequest("self-consistency", ada, name="default"),
        ],
        found,
    )
    assert found.found == []
    assert [(a.options, sorted(a.seats), a.calls()) for a in arms] == [
        ({"agents": 4}, [f"agent_{n}" for n in range(1, 5)], (4, 4)),
        ({"rounds": 1, "agents": 5}, [f"agent_{n}" for n in range(1, 6)], (10, 10)),
        ({"agents": 3}, [f"agent_{n}" for n in range(1, 4)], (3, 3)),
    ]
    found = Checks(BatchError)
    resolve(
        None,
        [
            ArmRequest("self-consistency", ada, agents=7),
            ArmRequest("self-consistency", ada, name="b", personas={"agent_5": ada}),
        ],
        found,
    )
    assert [p.message for p in found.found] == [
        "arm 1 (self-consistency): agents: Self-consistency vote seats 3 to 5 agents, not 7",
        "arm 2 (b): it seats 3 agents, so it has no Agent 5 seat (set agents: 5)",
    ]


@pytest.mark.django_db
def test_the_new_debate_form_lists_every_group_seat_and_refuses_a_mismatch_keeping_what_was_chosen(client):
    owner = get_user_model().objects.create_user("ola", password="pw-ola-123")
    client.force_login(owner)
    call_command("import_formats", str(CARDS), "--missing", stdout=StringIO())
    keys = ["agent_1", "agent_2", "agent_3", "agent_5"]
    personas(keys)
    ids = {k: Persona.objects.get(name=f"Speaker {k}").pk for k in keys}
    shown = client.get(reverse("debate_new"), {"format": "self-consistency"}).content.decode()
    assert all(f'name="seat_agent_{n}"' in shown for n in range(1, 6))  # the form offers the option's maximum
    data = {
        "format": "self-consistency",
        "topic": "What is 2+3*4?",
        "premise": "",
        "visibility": "private",
        "hold": 0,
        "option_agents": 4,
        **{f"seat_{k}": pk for k, pk in ids.items()},
    }
    reply = client.post(reverse("debate_new"), data)
    assert reply.status_code == 200
    html = reply.content.decode()
    assert (
        escape(
            "Agents is 4, so the Agent 4 seat must be filled. Agents is 4, so the Agent 5 seat must be empty "
            "(or set Agents to 5)."
        )
        in html
    )
    assert not Debate.objects.exists()
    # Nothing lost: every seat chosen is still chosen, and the option as given.
    for key, pk in ids.items():
        select = re.search(rf'<select name="seat_{key}".*?</select>', html, re.S).group(0)
        assert re.search(rf'<option value="{pk}" selected>', select), key
    assert re.search(r'name="option_agents"[^>]*value="4"|value="4"[^>]*name="option_agents"', html)


@pytest.mark.django_db
def test_the_api_refuses_a_mismatch_with_every_problem(client):
    owner = get_user_model().objects.create_user("ola", password="pw-ola-123")
    call_command("import_formats", str(CARDS), "--missing", stdout=StringIO())
    keys = ["agent_1", "agent_2", "agent_3", "agent_4", "agent_5"]
    personas(keys)
    ids = {k: Persona.objects.get(name=f"Speaker {k}").pk for k in keys}
    _, secret = create_token(owner, "seat groups", read_only=False)
    body = {"format": "self-consistency", "topic": "What is 2+3*4?", "seats": ids}
    auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    refused = client.post("/api/v1/debates", body, content_type="application/json", **auth)
    assert refused.status_code == 422, refused.content
    message = "Agents is 3, so the Agent 4 and Agent 5 seats must be empty (or set Agents to 5)."
    assert refused.json()["errors"] == [{"field": "body", "message": message}]
    assert not Debate.objects.exists()
