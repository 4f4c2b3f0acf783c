"""What a room's owner does: create it, add and remove agents, pause them, speak, switch modes, keep answers.

Views call these (the room's writes); they write the system messages the spec asks for and keep the queue in step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Max

from chaoslm.http import NumberError, parse_number
from personas.calls import LLMSettings
from personas.models import Persona
from rooms import queue as q
from rooms.context import agent_prompt
from rooms.models import Room, RoomAgent, RoomMessage, RoomTemplate
from rooms.saving import change_queue, lock_present
from rooms.table import queue_agents

MAX_MESSAGE_CHARS = 4000
# The messages an agent's presence counts from: what was said (a system line is in nobody's context).
SAID = [RoomMessage.Kind.USER, RoomMessage.Kind.AGENT, RoomMessage.Kind.PENDING, RoomMessage.Kind.SUMMARY]


class RoomError(ValueError):
    """Something the person asked for that cannot be done; the message says why."""


def system_message(room: Room, text: str) -> RoomMessage:
    return RoomMessage.objects.create(room=room, kind=RoomMessage.Kind.SYSTEM, content=text, active=False)


def create_room(owner: Any, title: str, visibility: str, personas: Iterable[Persona]) -> Room:
    """A new room with its first agents, who answer in the order given."""
    with transaction.atomic():
        room = Room.objects.create(title=title.strip() or "Room", owner=owner, visibility=visibility)
        for persona in personas:
            add_agent(room, persona)
    return room


def add_agent(room: Room, persona: Persona) -> tuple[RoomAgent, RoomMessage]:
    if room.agents.filter(name=persona.name).exists():
        raise RoomError(f"{persona.name} is already in this room.")
    spec = persona.spec()
    with transaction.atomic():
        agent = RoomAgent.objects.create(
            room=room,
            persona=persona,
            name=persona.name,
            role=persona.role,
            system_prompt=agent_prompt(spec.system_prompt("chat"), persona.name),
            llm=LLMSettings.of_spec(spec, provider_id=persona.provider_id).to_json(),
            # It sees what is said from now on, unless the owner lets it see earlier messages.
            joined_after=room.messages.filter(kind__in=SAID).aggregate(newest=Max("pk"))["newest"] or 0,
        )
        change_queue(room, lambda queue: q.add_agent(queue, agent.pk))
        message = system_message(room, f"[{agent.label}] joined the conversation")
    return agent, message


def remove_agent(room: Room, agent: RoomAgent) -> RoomMessage:
    """The agent leaves; its messages stay. Its row is locked first, as the engine locks it to save an answer: an
    answer it is writing is either saved before it goes or dropped (saving.lock_present), never written under it."""
    with transaction.atomic():
        lock_present([agent])
        change_queue(room, lambda queue: q.remove_agent(queue, agent.pk))
        message = system_message(room, f"[{agent.label}] left the conversation")
        agent.delete()
    return message


def toggle_participation(agent: RoomAgent) -> RoomAgent:
    agent.participating = not agent.participating
    agent.save(update_fields=["participating"])
    return agent


def post_message(room: Room, author: str, text: str, to: Iterable[int] = ()) -> RoomMessage:
    """The person's message; @mentions put the named agents next in the queue.

    `to`: a whisper, addressed to these agents only (the only ones that ever have it in their context).
    """
    text = text.strip()
    if room.mode == Room.Mode.AUTO:
        raise RoomError("Switch to manual mode to type (Ctrl+M).")
    if not text:
        raise RoomError("Write something first.")
    if len(text) > MAX_MESSAGE_CHARS:
        raise RoomError(f"Messages may be at most {MAX_MESSAGE_CHARS} characters; this one is {len(text)}.")
    if room.messages.filter(kind=RoomMessage.Kind.PENDING).exists():
        raise RoomError("Keep or drop the pending answers first.")
    agents = list(room.agents.all())
    audience = [a for a in agents if a.pk in set(to)]
    if len(audience) != len(set(to)):
        raise RoomError(
            "Whisper only to this room's agents: one you chose is not in it (has it left? reload the page)."
        )
    data = {"audience_names": [a.name for a in audience]} if audience else {}
    with transaction.atomic():
        message = RoomMessage.objects.create(
            room=room,
            kind=RoomMessage.Kind.USER,
            author=author,
            content=text,
            audience=[a.pk for a in audience],
            data=data,
        )
        # A whisper can only call on the agents it is addressed to.
        mentioned = q.find_mentions(text, queue_agents(audience or agents))
        change_queue(room, lambda queue: q.with_mentions(queue, mentioned))
    return message


def set_mode(room: Room, mode: str) -> RoomMessage | None:
    if mode == room.mode:
        return None
    if mode == Room.Mode.AUTO and room.messages.filter(kind=RoomMessage.Kind.PENDING).exists():
        raise RoomError("Keep or drop the pending answers before starting auto mode.")
    room.mode = mode
    room.pause_reason = ""
    room.retry_at = None
    fields: list[str] = ["mode", "pause_reason", "retry_at", "updated_at"]
    if mode == Room.Mode.AUTO:
        room.messages_since_auto = 0
        room.interrupted = False
        fields += ["messages_since_auto", "interrupted"]
    room.save(update_fields=fields)
    return system_message(room, "Auto mode started" if mode == Room.Mode.AUTO else "Auto mode stopped")


def submit_pending(room: Room, keep: set[int]) -> list[RoomMessage]:
    """Checked pending answers join the history as active; the rest as inactive (shown faded)."""
    with transaction.atomic():
        pending = list(room.messages.filter(kind=RoomMessage.Kind.PENDING).select_related("agent"))
        for message in pending:
            message.kind = RoomMessage.Kind.AGENT
            message.active = message.pk in keep
            message.save(update_fields=["kind", "active"])
    return pending


def toggle_active(message: RoomMessage) -> RoomMessage:
    if message.kind in (RoomMessage.Kind.USER, RoomMessage.Kind.AGENT, RoomMessage.Kind.SUMMARY):
        message.active = not message.active
        message.save(update_fields=["active"])
    return message


def set_turn_order(room: Room, turn_order: str, selector: Persona | None, repeat: bool, candidates: set[int]) -> None:
    """The room's turn order and its selector's options; `candidates`: the agents the selector may name."""
    with transaction.atomic():
        room.turn_order = turn_order
        room.selector = selector
        room.selector_repeat = repeat
        room.save(update_fields=["turn_order", "selector", "selector_repeat", "updated_at"])
        if turn_order != Room.TurnOrder.PICK:
            change_queue(room, lambda queue: dataclasses.replace(queue, picked=()))
        room.agents.exclude(pk__in=candidates).update(candidate=False)
        room.agents.filter(pk__in=candidates).update(candidate=True)


def speak_next(room: Room, agent: RoomAgent) -> None:
    """Pick mode: the agent speaks next (after any @mentioned agents)."""
    if room.turn_order != Room.TurnOrder.PICK:
        raise RoomError("Choose the turn order 'pick' to say who speaks next.")
    change_queue(room, lambda queue: q.pick(queue, agent.pk))


def move_earlier(room: Room, agent: RoomAgent) -> None:
    """Pick mode: the agent trades places with the one up just before it."""
    if room.turn_order != Room.TurnOrder.PICK:
        raise RoomError("Choose the turn order 'pick' to reorder who speaks next.")
    change_queue(room, lambda queue: q.move_earlier(queue, queue_agents(room.agents.all()), agent.pk))


def set_agent_settings(room: Room, values: dict[str, str]) -> None:
    """Each agent's talkativeness from the form's `talk-<agent id>` fields (whole numbers from 0 to 100), and
    whether it sees the messages from before it joined (`earlier-<agent id>` present)."""
    agents = list(room.agents.all())
    chosen: dict[RoomAgent, int] = {}
    for agent in agents:
        raw = values.get(f"talk-{agent.pk}")
        if raw is None:
            continue  # added since the form was drawn: it keeps its talkativeness
        try:
            chosen[agent] = parse_number(raw, f"{agent.name}'s talkativeness", high=100)
        except NumberError as error:
            raise RoomError(str(error)) from None
    with transaction.atomic():
        for agent in agents:
            agent.talkativeness = chosen.get(agent, agent.talkativeness)
            agent.sees_earlier = f"earlier-{agent.pk}" in values
            agent.save(update_fields=["talkativeness", "sees_earlier"])


def interrupt(room: Room) -> RoomMessage:
    """The owner takes the floor in auto mode: auto mode stops at once; the answer being written is kept as an
    inactive partial marked "interrupted" (rooms/saving.py), and the input opens."""
    if room.mode != Room.Mode.AUTO:
        raise RoomError("Auto mode is not running: the floor is yours already.")
    room.mode = Room.Mode.MANUAL
    room.interrupted = True
    room.pause_reason = ""
    room.retry_at = None
    room.save(update_fields=["mode", "interrupted", "pause_reason", "retry_at", "updated_at"])
    return system_message(room, "Auto mode stopped: the owner took the floor")


# What a template keeps of a room, besides its agents.
TEMPLATE_FIELDS = [
    "turn_order",
    "selector_id",
    "selector_repeat",
    "memory",
    "summarizer_id",
    "response_delay",
    "max_messages",
    "max_wait",
]


def save_template(room: Room, name: str) -> RoomTemplate:
    """The room's agents in queue order (with talkativeness and selector candidacy), turn order and settings."""
    name = name.strip()
    if not name:
        raise RoomError("Give the template a name.")
    if len(name) > 200:
        raise RoomError("A template's name may be at most 200 characters.")
    by_id = {a.pk: a for a in room.agents.all()}
    order = [by_id[i] for i in q.Queue.from_json(room.queue).order if i in by_id]
    data = {
        "agents": [
            {"persona": a.persona_id, "talkativeness": a.talkativeness, "candidate": a.candidate}
            for a in order
            if a.persona_id is not None
        ],
        "room": {field: getattr(room, field) for field in TEMPLATE_FIELDS},
    }
    template, _ = RoomTemplate.objects.update_or_create(owner=room.owner, name=name, defaults={"data": data})
    return template


def create_from_template(owner: Any, template: RoomTemplate, title: str, visibility: str) -> Room:
    """A new room as the template has it; personas deleted since are left out."""
    personas = Persona.objects.in_bulk([a["persona"] for a in template.data.get("agents", [])])
    with transaction.atomic():
        room = create_room(owner, title, visibility, [])
        for spec in template.data.get("agents", []):
            persona = personas.get(spec["persona"])
            if persona is None:
                continue
            agent, _ = add_agent(room, persona)
            agent.talkativeness = spec.get("talkativeness", 100)
            agent.candidate = spec.get("candidate", True)
            agent.save(update_fields=["talkativeness", "candidate"])
        settings = template.data.get("room", {})
        for field in TEMPLATE_FIELDS:
            if field in settings:
                setattr(room, field, settings[field])
        # A selector or summarizer persona deleted since: the default model.
        live = set(Persona.objects.filter(pk__in=[room.selector_id, room.summarizer_id]).values_list("pk", flat=True))
        room.selector_id = room.selector_id if room.selector_id in live else None
        room.summarizer_id = room.summarizer_id if room.summarizer_id in live else None
        room.save()
    return room
