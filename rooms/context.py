"""What each agent of a room sees (`sees`, the one rule for every request), its request (`history`), its
system prompt (`agent_prompt`), and the context meter that sizes every agent's request a message at a time."""

from __future__ import annotations

from collections.abc import Sequence

from chaoslm.llm.messages import append_merged
from rooms import queue as q
from rooms.models import RoomAgent, RoomMessage


def agent_prompt(persona_prompt: str, name: str) -> str:
    """The persona, the spec's SKIP rule, and a line that keeps each agent to its own voice."""
    return "\n\n".join(
        p
        for p in (
            persona_prompt,
            q.SKIP_RULE,
            q.SKIP_REASON_RULE,
            f"You are {name}, one participant in a group chat. Write only your own message; "
            "never write lines for the other participants.",
        )
        if p
    )


YOUR_TURN = "(Your turn.)"


def in_history(message: RoomMessage) -> bool:
    return message.active and message.kind in (RoomMessage.Kind.USER, RoomMessage.Kind.AGENT)


def _entry(message: RoomMessage, agent_id: int) -> tuple[str, str]:
    """How `message` reads in the request of the agent `agent_id`: (role, content)."""
    if message.kind == RoomMessage.Kind.SUMMARY:
        return "user", q.SUMMARY_PREFIX + message.content
    if message.agent_id == agent_id:
        return "assistant", message.content
    return "user", f"{message.author}: {message.content}"


def sees(message: RoomMessage, agent: RoomAgent) -> bool:
    """Whether `message` is in `agent`'s context: active, said (not a system line), not folded into a summary,
    addressed to it if a whisper, and said since it joined unless the owner lets it see earlier messages.
    A summary is seen like the oldest message it folds. The one rule for every request."""
    if message.kind == RoomMessage.Kind.SUMMARY:
        first = message.data.get("first", 0)
        return message.active and message.folded_into_id is None and (agent.sees_earlier or first > agent.joined_after)
    if not in_history(message) or message.folded_into_id is not None:
        return False
    if message.agent_id == agent.pk:
        return True
    if message.audience and agent.pk not in message.audience:
        return False
    return agent.sees_earlier or message.pk > agent.joined_after


def in_order(messages: Sequence[RoomMessage]) -> list[RoomMessage]:
    """The messages as agents read them: each summary where the oldest message it folds was (`data["first"]`),
    whether or not the folded messages were loaded."""
    if not any(m.kind == RoomMessage.Kind.SUMMARY for m in messages):
        return list(messages)

    def place(message: RoomMessage) -> tuple[int, int, int]:
        if message.kind == RoomMessage.Kind.SUMMARY:
            return (message.data.get("first", message.pk), 0, message.pk)
        return (message.pk, 1, message.pk)

    return sorted(messages, key=place)


def history(messages: Sequence[RoomMessage], agent: RoomAgent) -> list[dict[str, str]]:
    """The agent's request: its system prompt, then the messages it sees (`sees`), in order."""
    out: list[dict[str, str]] = [{"role": "system", "content": agent.system_prompt}]

    for message in in_order(messages):
        if sees(message, agent):
            append_merged(out, *_entry(message, agent.pk))
    if out[-1]["role"] != "user":
        append_merged(out, "user", YOUR_TURN)
    return out


def _term(length: int) -> int:
    # One message's share of gateway.estimate_tokens.
    return 4 + length // 4


class ContextMeter:
    """Each agent's estimated request size, as `estimate_tokens(history(messages, agent))`, kept a message at a time.

    It keeps only lengths: adding a message costs the same however long the conversation is.
    """

    def __init__(self, agents: Sequence[RoomAgent], windows: dict[int, int], messages: Sequence[RoomMessage]) -> None:
        self.windows = windows
        self.agents = {a.pk: a for a in agents}
        self.totals = {a.pk: 3 + _term(len(a.system_prompt)) for a in agents}
        self.last = {a.pk: ("system", len(a.system_prompt)) for a in agents}  # the role and length of the last entry
        for message in in_order(messages):
            self.add(message)

    def add(self, message: RoomMessage) -> None:
        if not in_history(message) and message.kind != RoomMessage.Kind.SUMMARY:
            return
        for agent_id, (last_role, last_length) in self.last.items():
            if not sees(message, self.agents[agent_id]):
                continue
            role, content = _entry(message, agent_id)
            if role == last_role:  # append_merged: joined to the last entry with a blank line
                merged = last_length + 2 + len(content)
                self.totals[agent_id] += _term(merged) - _term(last_length)
                self.last[agent_id] = (role, merged)
            else:
                self.totals[agent_id] += _term(len(content))
                self.last[agent_id] = (role, len(content))

    def tokens(self, agent_id: int) -> int:
        last_role, _ = self.last[agent_id]
        return self.totals[agent_id] + (0 if last_role == "user" else _term(len(YOUR_TURN)))

    def state(self) -> tuple[str, int, int]:
        """The fullest agent's context: (level, estimated tokens, window)."""
        worst = ("ok", 0, 0)
        for agent_id in self.totals:
            tokens, window = self.tokens(agent_id), self.windows[agent_id]
            if tokens / max(window, 1) > worst[1] / max(worst[2], 1):
                worst = (q.context_level(tokens, window), tokens, window)
        return worst
