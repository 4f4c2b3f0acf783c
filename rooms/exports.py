"""A room's transcript as Markdown and JSON, like a debate's (debates/transcripts.py).

The owner's export has everything: whispers, the agents' system prompts, the summaries' folded messages.
Anyone else's (and every share link's) has what the page shows them: no whisper, no system prompt.
"""

from __future__ import annotations

import json
from typing import Any

from chaoslm import costs
from chaoslm.llm import marks
from rooms import selectors
from rooms.models import Room, RoomMessage


def message_entry(message: RoomMessage) -> dict[str, Any]:
    """One message as the exports (and the API's event stream) give it."""
    entry: dict[str, Any] = {
        "id": message.pk,
        "kind": message.kind,
        "author": message.author,
        "content": message.content,
        "active": message.active,
        "created_at": message.created_at.isoformat(),
    }
    if message.audience:
        entry["whisper_to"] = message.data.get("audience_names", [])
    if message.folded_into_id:
        entry["summarised_in"] = message.folded_into_id
    if message.data.get("interrupted"):
        entry["interrupted"] = True
    if message.data.get("cut_at_tokens"):
        entry["cut_at_tokens"] = message.data["cut_at_tokens"]
    if message.data.get("embedded_model"):
        entry["embedded_model"] = message.data["embedded_model"]
    if message.kind == RoomMessage.Kind.SUMMARY:
        entry["folds"] = message.data.get("folded", 0)
    return entry


def as_dict(room: Room, *, include_private: bool) -> dict[str, Any]:
    shown = [
        message
        for message in room.messages.exclude(kind=RoomMessage.Kind.PENDING)
        if include_private or not message.audience
    ]
    agents = [
        {
            "name": a.name,
            "role": a.role,
            "participating": a.participating,
            "talkativeness": a.talkativeness,
            **({"system_prompt": a.system_prompt, "llm": a.llm} if include_private else {}),
        }
        for a in room.agents.all()
    ]
    return {
        "id": room.pk,
        "title": room.title,
        "mode": room.mode,
        "turn_order": room.turn_order,
        "memory": room.memory,
        "agents": agents,
        "written_by_embedded": selectors.embedded_line(shown) or None,
        "messages": [message_entry(message) for message in shown],
        "cost": cost_of(room),
    }


def cost_of(room: Room) -> dict[str, Any]:
    """What the room's calls cost, in all and per speaker (an agent, the summarizer) and model. One query."""
    rows = costs.totals_by(room.messages.filter(tokens_in__gt=0), "author", "data__model")
    total = sum((row[1] for row in rows), costs.Total())
    return {
        **total.as_json(),
        "by_persona": [
            {
                "persona": name,
                "model": model or "",
                "calls": t.calls,
                "tokens_in": t_in,
                "tokens_out": t_out,
                **t.as_json(),
            }
            for (name, model), t, t_in, t_out, _ in rows
        ],
    }


def as_json(room: Room, *, include_private: bool) -> str:
    return json.dumps(as_dict(room, include_private=include_private), indent=2, ensure_ascii=False)


def _line(message: dict[str, Any]) -> str:
    if message["kind"] in (RoomMessage.Kind.SYSTEM, RoomMessage.Kind.ERROR):
        return f"*{message['content']}*"
    notes = []
    if "whisper_to" in message:
        notes.append("whisper to " + ", ".join(message["whisper_to"]))
    if not message["active"]:
        notes.append("inactive")
    if message.get("interrupted"):
        notes.append("interrupted")
    if "summarised_in" in message:
        notes.append("summarised")
    if "cut_at_tokens" in message:
        notes.append(marks.cut_words(message["cut_at_tokens"]))
    if "embedded_model" in message:
        notes.append(f"written by the embedded {message['embedded_model']} model")
    if message["kind"] == RoomMessage.Kind.SUMMARY:
        head = f"**Summary** of {message['folds']} earlier messages"
    else:
        head = f"**{message['author']}**"
    note = f" ({'; '.join(notes)})" if notes else ""
    return f"{head}{note}:\n\n{message['content']}"


def as_markdown(room: Room, *, include_private: bool) -> str:
    data = as_dict(room, include_private=include_private)
    agents = "\n".join(
        f"- {a['name']}" + (f" | {a['role']}" if a["role"] else "") + ("" if a["participating"] else " (paused)")
        for a in data["agents"]
    )
    lines = "\n\n".join(_line(m) for m in data["messages"])
    order = room.get_turn_order_display()
    written = f"*{data['written_by_embedded']}*\n\n" if data["written_by_embedded"] else ""
    return (
        f"# {data['title']}\n\nChat room · turn order: {order}\n\n{written}## Agents\n\n{agents}\n\n"
        f"## Messages\n\n{lines}\n"
    )
