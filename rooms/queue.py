"""The chat room's turn queue (../shared/specs/chat-room.md), as pure functions over plain data.

Agents answer in the order they were added. An @mention puts the mentioned agents next (several
mentions answer together, in queue order); after them the queue returns to its normal order where
it left off. Paused agents are passed over. A full round in which every participating agent
skipped stops auto mode, as do the message limit and 95% of the context window.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

SKIP_RULE = """Before responding, evaluate if you have something valuable to add to the conversation.
If the current discussion is outside your expertise or you have nothing meaningful
to contribute, respond with exactly "SKIP" instead of a regular response."""

CONTEXT_WARNING = 0.80
CONTEXT_CRITICAL = 0.95


@dataclass(frozen=True)
class Agent:
    id: int
    name: str
    participating: bool = True


@dataclass(frozen=True)
class Queue:
    order: tuple[int, ...] = ()
    cursor: int = 0  # index in `order` of the next agent in normal rotation
    mentioned: tuple[int, ...] = ()  # agents inserted next by an @mention
    skipped: tuple[int, ...] = ()  # agents that skipped since the last real response

    def to_json(self) -> dict[str, list[int] | int]:
        return {
            "order": list(self.order),
            "cursor": self.cursor,
            "mentioned": list(self.mentioned),
            "skipped": list(self.skipped),
        }

    @classmethod
    def from_json(cls, data: dict | None) -> Queue:
        data = data or {}
        return cls(
            order=tuple(data.get("order", ())),
            cursor=int(data.get("cursor", 0)),
            mentioned=tuple(data.get("mentioned", ())),
            skipped=tuple(data.get("skipped", ())),
        )


def add_agent(queue: Queue, agent_id: int) -> Queue:
    """A new agent joins the end of the queue."""
    if agent_id in queue.order:
        return queue
    return replace(queue, order=(*queue.order, agent_id))


def remove_agent(queue: Queue, agent_id: int) -> Queue:
    if agent_id not in queue.order:
        return queue
    index = queue.order.index(agent_id)
    order = tuple(a for a in queue.order if a != agent_id)
    cursor = queue.cursor - 1 if index < queue.cursor else queue.cursor
    return Queue(
        order=order,
        cursor=cursor % len(order) if order else 0,
        mentioned=tuple(a for a in queue.mentioned if a != agent_id),
        skipped=tuple(a for a in queue.skipped if a != agent_id),
    )


_MENTION = re.compile(r"(?<![\w@])@([^\s@]+(?:\s+[^\s@]+){0,3})")


def find_mentions(text: str, agents: Sequence[Agent], author_id: int | None = None) -> tuple[int, ...]:
    """The agents an @mention names, in queue order. Case-insensitive; a partial name matches the first
    agent whose name starts with it, else whose name has a word starting with it; self-mentions are ignored."""
    found: set[int] = set()
    for match in _MENTION.finditer(text):
        words = match.group(1).split()
        chosen = None
        # The longest run of words that starts an agent's name wins: "@Ines Okafor" over "@Ines".
        for count in range(len(words), 0, -1):
            candidate = " ".join(words[:count]).rstrip(".,;:!?'\")").casefold()
            if not candidate:
                continue
            chosen = (
                next((a for a in agents if a.name.casefold() == candidate), None)
                or next((a for a in agents if a.name.casefold().startswith(candidate)), None)
                or next((a for a in agents if re.search(rf"\b{re.escape(candidate)}", a.name.casefold())), None)
            )
            if chosen is not None:
                break
        if chosen is not None and chosen.id != author_id:
            found.add(chosen.id)
    return tuple(a.id for a in agents if a.id in found)


def with_mentions(queue: Queue, mentioned: Iterable[int]) -> Queue:
    ids = tuple(a for a in queue.order if a in set(mentioned))
    return replace(queue, mentioned=ids) if ids else queue


def next_group(queue: Queue, agents: Sequence[Agent]) -> tuple[int, ...]:
    """Who answers next: the mentioned agents together, or the next participating agent in rotation."""
    participating = {a.id for a in agents if a.participating}
    mentioned = tuple(a for a in queue.mentioned if a in participating)
    if mentioned:
        return mentioned
    count = len(queue.order)
    for step in range(count):
        agent = queue.order[(queue.cursor + step) % count]
        if agent in participating:
            return (agent,)
    return ()


def advance(queue: Queue, group: Sequence[int], skipped: Iterable[int] = ()) -> Queue:
    """The queue after `group` answered (those in `skipped` answered SKIP)."""
    skipped = set(skipped)
    answered = [a for a in group if a not in skipped]
    skips = () if answered else tuple(dict.fromkeys((*queue.skipped, *group)))
    if queue.mentioned and tuple(group) == queue.mentioned:
        # After the mentioned agents, the normal order resumes where it was.
        return replace(queue, mentioned=(), skipped=skips)
    cursor = queue.cursor
    if group and group[-1] in queue.order:
        cursor = (queue.order.index(group[-1]) + 1) % len(queue.order)
    return replace(queue, cursor=cursor, skipped=skips)


def everyone_skipped(queue: Queue, agents: Sequence[Agent]) -> bool:
    participating = {a.id for a in agents if a.participating}
    return bool(participating) and participating <= set(queue.skipped)


# Beyond the spec's exact "SKIP": "SKIP: <reason>" on one line (issue 20), the reason shown in the system line.
SKIP_REASON_RULE = 'To say why you skip, you may write "SKIP: <reason>" on one line instead.'
MAX_SKIP_REASON = 200
_SKIP = re.compile(r"[\"'`*_]*SKIP[\"'`*_.!]*(?:[ \t]*[:\u2014-][ \t]*(?P<reason>[^\n]*))?", re.IGNORECASE)


def skip_reason(text: str) -> str | None:
    """None if `text` is an answer; if it skips, the reason it gave ("" for a bare SKIP)."""
    match = _SKIP.fullmatch(text.strip())
    if match is None:
        return None
    reason = (match.group("reason") or "").strip().strip("\"'`*_").strip()
    return reason[:MAX_SKIP_REASON] if reason.strip(".!") else ""


def skip_line(label: str, reason: str) -> str:
    """The system line for a skip: the spec's, with the reason after a colon when one was given."""
    return f"[{label}] skipped their turn" + (f": {reason}" if reason else "")


def context_level(tokens: int, window: int) -> Literal["ok", "warning", "critical"]:
    if window <= 0:
        return "ok"
    share = tokens / window
    if share >= CONTEXT_CRITICAL:
        return "critical"
    if share >= CONTEXT_WARNING:
        return "warning"
    return "ok"


def message_limit_reached(messages_since_start: int, max_messages: int) -> bool:
    """`max_messages` 0 means no limit."""
    return max_messages > 0 and messages_since_start >= max_messages


@dataclass(frozen=True)
class Guarded:
    text: str
    cut_at: str = ""  # the other speaker whose lines were cut off


def guard_speaker(text: str, speaker: str, others: Iterable[str]) -> Guarded:
    """Cut a reply where the agent starts writing another participant's lines ("Bob:" at a line start)."""
    names = sorted({n for n in others if n and n != speaker}, key=len, reverse=True)
    if not names:
        return Guarded(text)
    pattern = re.compile(
        r"^[ \t>*_]*(" + "|".join(re.escape(n) for n in names) + r")[ \t*_]*:", re.IGNORECASE | re.MULTILINE
    )
    match = pattern.search(text)
    if match is None:
        return Guarded(text)
    return Guarded(text[: match.start()].rstrip(), cut_at=match.group(1))
