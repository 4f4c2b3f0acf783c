"""Who saw what: every agent's request after a whisper and a late join, from the one rule (rooms.engine.sees)."""

from chaoslm.llm import estimate_tokens
from rooms.engine import YOUR_TURN, ContextMeter, history
from rooms.models import RoomAgent, RoomMessage

ALICE = RoomAgent(pk=1, name="Alice", system_prompt="You are Alice.")
BOB = RoomAgent(pk=2, name="Bob", system_prompt="You are Bob.")


def charlie(sees_earlier=False):
    return RoomAgent(pk=3, name="Charlie", system_prompt="You are Charlie.", joined_after=5, sees_earlier=sees_earlier)


def said(pk, author, content, agent=None, **fields):
    kind = RoomMessage.Kind.AGENT if agent else RoomMessage.Kind.USER
    return RoomMessage(pk=pk, kind=kind, author=author, content=content, agent_id=agent, **fields)


MESSAGES = [
    said(1, "olive", "Hello all"),
    said(2, "Alice", "Hi", agent=1),
    said(3, "olive", "Bob, between us: the budget is 5k", audience=[2]),
    said(4, "Bob", "Noted", agent=2),
    RoomMessage(pk=5, kind=RoomMessage.Kind.SYSTEM, content="[Charlie] joined the conversation", active=False),
    said(6, "olive", "Welcome, Charlie"),
    said(7, "Charlie", "Thanks", agent=3),
]


def test_a_whisper_is_only_in_its_audience_s_history_and_a_late_joiner_sees_from_when_it_joined():
    assert history(MESSAGES, ALICE) == [
        {"role": "system", "content": "You are Alice."},
        {"role": "user", "content": "olive: Hello all"},
        {"role": "assistant", "content": "Hi"},
        {"role": "user", "content": "Bob: Noted\n\nolive: Welcome, Charlie\n\nCharlie: Thanks"},
    ]
    assert history(MESSAGES, BOB) == [
        {"role": "system", "content": "You are Bob."},
        {"role": "user", "content": "olive: Hello all\n\nAlice: Hi\n\nolive: Bob, between us: the budget is 5k"},
        {"role": "assistant", "content": "Noted"},
        {"role": "user", "content": "olive: Welcome, Charlie\n\nCharlie: Thanks"},
    ]
    assert history(MESSAGES, charlie()) == [
        {"role": "system", "content": "You are Charlie."},
        {"role": "user", "content": "olive: Welcome, Charlie"},
        {"role": "assistant", "content": "Thanks"},
        {"role": "user", "content": YOUR_TURN},
    ]
    # The owner lets Charlie see the earlier messages: all of them but the whisper, which was never its.
    assert history(MESSAGES, charlie(sees_earlier=True))[1] == {
        "role": "user",
        "content": "olive: Hello all\n\nAlice: Hi\n\nBob: Noted\n\nolive: Welcome, Charlie",
    }


def test_the_context_meter_counts_what_each_agent_sees():
    agents = [ALICE, BOB, charlie()]
    meter = ContextMeter(agents, {a.pk: 1000 for a in agents}, MESSAGES)
    for agent in agents:
        assert meter.tokens(agent.pk) == estimate_tokens(history(MESSAGES, agent))
