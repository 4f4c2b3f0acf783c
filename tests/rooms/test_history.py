"""Who saw what: every agent's request after a whisper, a late join and a summary (the one rule: context.sees)."""

from chaoslm.llm import estimate_tokens
from rooms.context import YOUR_TURN, ContextMeter, history
from rooms.models import RoomAgent, RoomMessage
from rooms.queue import SUMMARIZER_SYSTEM, SUMMARY_PREFIX, summarizer_messages, to_fold

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


def test_a_summary_stands_in_for_what_it_folds_for_those_who_saw_it():
    folded = [
        said(1, "olive", "Hello all", folded_into_id=9),
        said(2, "Alice", "Hi", agent=1, folded_into_id=9),
        said(3, "olive", "Bob, between us: the budget is 5k", audience=[2]),  # whispers are never folded
        said(4, "Bob", "Noted", agent=2, folded_into_id=9),
        RoomMessage(pk=5, kind=RoomMessage.Kind.SYSTEM, content="[Charlie] joined the conversation", active=False),
        said(6, "olive", "Welcome, Charlie"),
        RoomMessage(pk=9, kind=RoomMessage.Kind.SUMMARY, author="Summary", content="Greetings.", data={"first": 1}),
    ]
    summary = SUMMARY_PREFIX + "Greetings."
    assert history(folded, ALICE) == [
        {"role": "system", "content": "You are Alice."},
        {"role": "user", "content": f"{summary}\n\nolive: Welcome, Charlie"},
    ]
    assert history(folded, BOB)[1] == {
        "role": "user",
        "content": f"{summary}\n\nolive: Bob, between us: the budget is 5k\n\nolive: Welcome, Charlie",
    }
    # Charlie joined after what the summary folds: it sees neither, unless the owner lets it see earlier messages.
    assert history(folded, charlie())[1] == {"role": "user", "content": "olive: Welcome, Charlie"}
    assert history(folded, charlie(sees_earlier=True))[1]["content"].startswith(summary)
    # The summary toggled off: agents see neither it nor what it folded.
    folded[-1].active = False
    assert history(folded, ALICE)[1] == {"role": "user", "content": "olive: Welcome, Charlie"}
    folded[-1].active = True
    agents = [ALICE, BOB, charlie()]
    meter = ContextMeter(agents, {a.pk: 1000 for a in agents}, folded)
    assert all(meter.tokens(a.pk) == estimate_tokens(history(folded, a)) for a in agents)


def test_the_exact_messages_the_summarizer_receives_and_what_folds():
    assert to_fold([1, 2, 3, 4, 5]) == (1, 2) and to_fold([1, 2, 3]) == ()
    assert summarizer_messages([("", "Earlier."), ("olive", "Hello"), ("Alice", "Hi")]) == [
        {"role": "system", "content": SUMMARIZER_SYSTEM},
        {
            "role": "user",
            "content": "The messages to summarise, oldest first:\n\n"
            "Summary of the earlier conversation: Earlier.\n\nolive: Hello\n\nAlice: Hi\n\nWrite the summary.",
        },
    ]
