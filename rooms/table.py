"""A room as one turn sees it (`RoomTable`, loaded by `load_room`), and `RoomObserver`, who hears what happens in it
(rooms/broadcast.py pushes it to the page)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chaoslm.llm import ChatOptions, Endpoint
from personas.calls import LLMSettings
from rooms import queue as q
from rooms.context import ContextMeter
from rooms.models import Room, RoomAgent, RoomMessage


class RoomObserver:
    """Receives what happens in a room; the defaults do nothing. Token hooks must only buffer."""

    def started(self, room: Room, agent: RoomAgent) -> None:
        pass

    def delta(self, room: Room, agent: RoomAgent, text: str) -> None:
        pass

    def queued(self, room: Room, agent: RoomAgent, ahead: int) -> None:
        """The agent's call waits for the embedded model, `ahead` calls before it; 0 once it is being answered."""

    async def message_saved(self, room: Room, message: RoomMessage) -> None:
        pass

    def dropped(self, room: Room, agent: RoomAgent) -> None:
        """The agent left the room while it answered: its answer is not kept."""

    async def room_changed(self, room: Room, note: str = "") -> None:
        pass

    async def countdown(self, room: Room, seconds: int) -> None:
        pass

    def loaded(self, table: RoomTable) -> None:
        """The engine (re)loaded the room: the state its next pushes start from."""

    async def drain(self) -> None:
        pass


@dataclass
class RoomTable:
    """A room as one turn sees it: the room, its agents, its history and their endpoints."""

    room: Room
    agents: list[RoomAgent]
    messages: list[RoomMessage]
    endpoints: dict[int, Endpoint]
    # A selector room's selector: the endpoint and options of its persona, or of the default model.
    selector: tuple[Endpoint, ChatOptions] | None = None
    # A summarising room's summarizer, likewise.
    summarizer: tuple[Endpoint, ChatOptions] | None = None
    _meter: ContextMeter | None = None

    def meter(self) -> ContextMeter:
        """The agents' context sizes, measured once a load; the broadcaster then adds the turn's messages."""
        if self._meter is None:
            windows = {agent_id: endpoint.context_window for agent_id, endpoint in self.endpoints.items()}
            self._meter = ContextMeter(self.agents, windows, self.messages)
        return self._meter


def load_room(room_id: int) -> RoomTable:
    room = Room.objects.get(pk=room_id)
    agents = list(room.agents.all())
    selector = None
    if room.turn_order == Room.TurnOrder.SELECTOR:
        persona = room.selector
        llm = LLMSettings.of_persona(persona) if persona is not None else LLMSettings()
        selector = (llm.endpoint(), llm.options())
    summarizer = None
    if room.memory == Room.Memory.SUMMARIZE:
        persona = room.summarizer
        llm = LLMSettings.of_persona(persona) if persona is not None else LLMSettings()
        summarizer = (llm.endpoint(), llm.options())
    return RoomTable(
        room=room,
        agents=agents,
        # Only what an agent may see (`sees`): said, active, not folded. With summaries on, that stays within
        # a context window however long the room grows, and so does a turn's work.
        messages=list(room.messages.filter(active=True, folded_into__isnull=True, kind__in=SEEABLE)),
        endpoints={a.pk: a.llm_settings.endpoint() for a in agents},
        selector=selector,
        summarizer=summarizer,
    )


SEEABLE = [RoomMessage.Kind.USER, RoomMessage.Kind.AGENT, RoomMessage.Kind.SUMMARY]


def queue_agents(agents: Sequence[RoomAgent]) -> list[q.Agent]:
    return [
        q.Agent(a.pk, a.name, a.participating, role=a.role, candidate=a.candidate, talkativeness=a.talkativeness)
        for a in agents
    ]
