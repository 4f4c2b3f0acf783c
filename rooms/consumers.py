"""A room page's websocket: a room its viewer may see."""

from __future__ import annotations

from chaoslm import live
from chaoslm.consumers import SharedConsumer
from rooms.models import Room


class RoomConsumer(SharedConsumer):
    model = Room

    def group_of(self, thing: Room) -> str:
        return live.room_group(thing.pk)
