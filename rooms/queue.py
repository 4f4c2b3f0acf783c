"""The chat room's turn queue (docs/protocols/rooms.md), as pure functions over plain data.

Agents answer in the order they were added. An @mention puts the mentioned agents next (several
mentions answer together, in queue order); after them the queue returns to its normal order where
it left off. Paused agents are passed over. A full round in which every participating agent
skipped stops auto mode, as do the message limit and 95% of the context window.

Three turn orders share the one Queue, mentions first in all of them: round robin (the spec's, the
default); selector (a model names who speaks next; `selector_messages` is what it is asked and
`parse_selection` reads its answer, an invalid answer falling back to round robin); and pick (the owner
puts agents next, `picked`, and may reorder who is up next).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

SKIP_RULE = """Before responding, evaluate if you have something valuable to add to the conversation.
If the current discussion is outside your expertise or you have nothing meaningful
to contribute, respond with exactly "SKIP" instead of a regular response."""

CONTEXT_WARNING = 0.80
CONTEXT_CRITICAL = 0.95


ROUND_ROBIN = "round_robin"
SELECTOR = "selector"
PICK = "pick"


@dataclass(frozen=True)
class Agent:
    id: int
    name: str
    participating: bool = True
    role: str = ""
    candidate: bool = True  # may the selector name it
    talkativeness: int = 100  # the chance (%) it is asked when its turn comes; 0: only when @mentioned


@dataclass(frozen=True)
class Queue:
    order: tuple[int, ...] = ()
    cursor: int = 0  # index in `order` of the next agent in normal rotation
    mentioned: tuple[int, ...] = ()  # agents inserted next by an @mention
    skipped: tuple[int, ...] = ()  # agents that skipped since the last real response
    picked: tuple[int, ...] = ()  # pick: the agents the owner put next, in order
    last: tuple[int, ...] = ()  # the group that spoke last (the selector may not name it again unless allowed)
    turns: int = 0  # turns taken: with the room's seed, it makes each talkativeness draw reproducible
    passed: tuple[int, ...] = ()  # who the last turn's draws passed over

    def to_json(self) -> dict[str, list[int] | int]:
        return {
            "order": list(self.order),
            "cursor": self.cursor,
            "mentioned": list(self.mentioned),
            "skipped": list(self.skipped),
            "picked": list(self.picked),
            "last": list(self.last),
            "turns": self.turns,
            "passed": list(self.passed),
        }

    @classmethod
    def from_json(cls, data: dict | None) -> Queue:
        data = data or {}
        return cls(
            order=tuple(data.get("order", ())),
            cursor=int(data.get("cursor", 0)),
            mentioned=tuple(data.get("mentioned", ())),
            skipped=tuple(data.get("skipped", ())),
            picked=tuple(data.get("picked", ())),
            last=tuple(data.get("last", ())),
            turns=int(data.get("turns", 0)),
            passed=tuple(data.get("passed", ())),
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
        picked=tuple(a for a in queue.picked if a != agent_id),
        last=tuple(a for a in queue.last if a != agent_id),
        turns=queue.turns,
        passed=tuple(a for a in queue.passed if a != agent_id),
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


def mentioned_next(queue: Queue, agents: Sequence[Agent]) -> tuple[int, ...]:
    """The participating agents an @mention put next (they answer together), or ()."""
    participating = {a.id for a in agents if a.participating}
    return tuple(a for a in queue.mentioned if a in participating)


def _rotation(queue: Queue, participating: set[int]) -> list[int]:
    """The participating agents in normal order, starting at the cursor."""
    count = len(queue.order)
    turns = (queue.order[(queue.cursor + step) % count] for step in range(count))
    return [a for a in turns if a in participating]


@dataclass(frozen=True)
class Turn:
    group: tuple[int, ...]  # who answers (together)
    passed: tuple[int, ...] = ()  # whose turn came but whose talkativeness draw passed them over


def asked(seed: int, turn: int, agent: Agent) -> bool:
    """Whether `agent` is asked when its turn comes: a draw at its talkativeness, the same for the same room and
    turn (a redelivered turn, a replayed run). At 0 it is asked only when @mentioned."""
    if agent.talkativeness >= 100:
        return True
    if agent.talkativeness <= 0:
        return False
    return random.Random(f"{seed}:{turn}:{agent.id}").random() * 100 < agent.talkativeness


def next_turn(queue: Queue, agents: Sequence[Agent], turn_order: str = ROUND_ROBIN, seed: int = 0) -> Turn:
    """Who answers next: the mentioned agents together; in pick mode the first agent the owner put next;
    else the next participating agent in rotation whose talkativeness draw asks it (for a selector room, the
    fallback when its answer is invalid)."""
    mentioned = mentioned_next(queue, agents)
    if mentioned:
        return Turn(mentioned)
    participating = {a.id for a in agents if a.participating}
    if turn_order == PICK:
        picked = [a for a in queue.picked if a in participating]
        if picked:
            return Turn((picked[0],))
    by_id = {a.id: a for a in agents}
    rotation = _rotation(queue, participating)
    for index, agent_id in enumerate(rotation):
        if asked(seed, queue.turns, by_id[agent_id]):
            return Turn((agent_id,), tuple(rotation[:index]))
    # Every draw passed: the most talkative agent who talks at all speaks, so bad luck never stalls the room.
    talkers = [a for a in rotation if by_id[a].talkativeness > 0]
    if not talkers:
        return Turn((), tuple(rotation))
    chosen = max(talkers, key=lambda a: by_id[a].talkativeness)
    return Turn((chosen,), tuple(a for a in rotation if a != chosen))


def next_group(queue: Queue, agents: Sequence[Agent], turn_order: str = ROUND_ROBIN, seed: int = 0) -> tuple[int, ...]:
    return next_turn(queue, agents, turn_order, seed).group


def upcoming(queue: Queue, agents: Sequence[Agent]) -> tuple[int, ...]:
    """Pick mode's queue as the owner sees it: every participating agent once, in the order they are up next."""
    participating = {a.id for a in agents if a.participating}
    ahead = [*mentioned_next(queue, agents), *(a for a in queue.picked if a in participating)]
    return tuple(dict.fromkeys([*ahead, *_rotation(queue, participating)]))


def pick(queue: Queue, agent_id: int) -> Queue:
    """Pick mode's "speak next": the agent goes first among those the owner put next."""
    if agent_id not in queue.order:
        return queue
    return replace(queue, picked=(agent_id, *(a for a in queue.picked if a != agent_id)))


def move_earlier(queue: Queue, agents: Sequence[Agent], agent_id: int) -> Queue:
    """Pick mode's reordering: the agent trades places with the one up just before it."""
    order = list(upcoming(queue, agents))
    if agent_id not in order:
        return queue
    index = order.index(agent_id)
    if index > 0:
        order[index - 1], order[index] = order[index], order[index - 1]
    return replace(queue, picked=tuple(order))


def was_picked(queue: Queue, agents: Sequence[Agent], group: Sequence[int], turn_order: str) -> bool:
    """Whether `group` (from `next_group`) speaks because the owner put it next, not in its turn."""
    return turn_order == PICK and not mentioned_next(queue, agents) and bool(group) and group[0] in queue.picked


def advance(
    queue: Queue,
    group: Sequence[int],
    skipped: Iterable[int] = (),
    *,
    picked: bool = False,
    passed: Sequence[int] = (),
) -> Queue:
    """The queue after `group` answered (those in `skipped` answered SKIP); `picked`: the owner had put it next;
    `passed`: whose turns the talkativeness draws passed over on the way."""
    skipped = set(skipped)
    answered = [a for a in group if a not in skipped]
    skips = () if answered else tuple(dict.fromkeys((*queue.skipped, *group)))
    spoke = {
        "skipped": skips,
        "last": tuple(group),
        "picked": tuple(a for a in queue.picked if a not in group),
        "turns": queue.turns + 1,
        "passed": tuple(passed),
    }
    if picked or (queue.mentioned and tuple(group) == queue.mentioned):
        # After the mentioned or picked agents, the normal order resumes where it was.
        return replace(queue, mentioned=(), **spoke)
    cursor = queue.cursor
    if group and group[-1] in queue.order:
        cursor = (queue.order.index(group[-1]) + 1) % len(queue.order)
    return replace(queue, cursor=cursor, **spoke)


SELECTOR_SYSTEM = (
    "You choose who speaks next in a group chat. Answer with one line: the name of the participant who should "
    "speak next, an em dash, and why in a few words, for example: Mira \u2014 asked about costs"
)
SELECTOR_WINDOW = 12  # the recent active messages the selector reads: its request stays the same size
SELECTOR_MESSAGE_CHARS = 600


def selector_candidates(queue: Queue, agents: Sequence[Agent], allow_repeat: bool) -> list[Agent]:
    """Who the selector may name: participating candidates who talk at all (talkativeness above 0), not the last
    speaker unless repeats are allowed."""
    return [
        a
        for a in agents
        if a.participating and a.candidate and a.talkativeness > 0 and (allow_repeat or a.id not in queue.last)
    ]


def _shortened(text: str) -> str:
    return text if len(text) <= SELECTOR_MESSAGE_CHARS else text[:SELECTOR_MESSAGE_CHARS] + "\u2026"


def selector_messages(
    recent: Sequence[tuple[str, str]], candidates: Sequence[Agent], just_spoke: str = ""
) -> list[dict[str, str]]:
    """The selector's request: the candidates' names and roles, the recent (author, text) lines, the question."""
    people = "\n".join(f"- {a.name} ({a.role})" if a.role else f"- {a.name}" for a in candidates)
    lines = "\n".join(f"{author}: {_shortened(text)}" for author, text in recent[-SELECTOR_WINDOW:])
    ask = "Who should speak next?" + (f" Not {just_spoke}, who just spoke." if just_spoke else "")
    return [
        {"role": "system", "content": SELECTOR_SYSTEM},
        {
            "role": "user",
            "content": f"Participants who may speak next:\n{people}\n\n"
            f"The conversation so far (most recent last):\n{lines or '(nothing yet)'}\n\n{ask}",
        },
    ]


@dataclass(frozen=True)
class Selection:
    agent_id: int
    reason: str = ""


_SELECTION = re.compile(r"\s*(?:\u2014|\u2013|\s-\s|:)\s*")


def parse_selection(answer: str, candidates: Sequence[Agent]) -> Selection | None:
    """The candidate the selector's first line names ("Mira — asked about costs"), or None if it names none."""
    line = next((line.strip() for line in answer.splitlines() if line.strip()), "")
    line = re.sub(r"^[*_`\"' ]*next(?: speaker)?[*_`\"' ]*:\s*", "", line, flags=re.IGNORECASE)
    name, *rest = _SELECTION.split(line, maxsplit=1)
    name = name.strip("*_`\"' .,").casefold()
    chosen = next((a for a in candidates if a.name.casefold() == name), None) or next(
        (a for a in candidates if a.name.casefold().split()[0] == name), None
    )
    if chosen is None or not name:
        return None
    reason = rest[0].strip().strip("*_`\"'").strip() if rest else ""
    return Selection(chosen.id, reason[:MAX_SKIP_REASON])


def selection_line(name: str, reason: str) -> str:
    return f"Next: {name} \u2014 {reason}" if reason else f"Next: {name}"


def fallback_line(name: str, why: str) -> str:
    """The system line when the selector's answer cannot be used: round robin goes on, and says so."""
    return f"Next: {name} \u2014 round robin, because {why}"


SUMMARIZER_SYSTEM = (
    "You summarise the earlier part of a group chat for its participants, so they can go on without it. "
    "Keep who said what, the decisions, the open questions, and every fact, name and number. "
    "Write at most 200 words of plain prose."
)
SUMMARY_PREFIX = "Summary of the earlier conversation: "


def to_fold(ids: Sequence[int]) -> tuple[int, ...]:
    """Of the messages that may be folded (oldest first), the older half; nothing if fewer than two would fold."""
    fold = tuple(ids[: len(ids) // 2])
    return fold if len(fold) >= 2 else ()


def summarizer_messages(lines: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """The summarizer's request: the (author, text) lines to fold, oldest first ("" for an earlier summary)."""
    text = "\n\n".join(f"{author}: {content}" if author else f"{SUMMARY_PREFIX}{content}" for author, content in lines)
    return [
        {"role": "system", "content": SUMMARIZER_SYSTEM},
        {"role": "user", "content": f"The messages to summarise, oldest first:\n\n{text}\n\nWrite the summary."},
    ]


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
