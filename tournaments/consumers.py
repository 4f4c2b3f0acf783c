"""The tournament page's websocket: a tournament its viewer may see; the live parts as they stand, then pushes."""

from __future__ import annotations

from channels.db import database_sync_to_async

from chaoslm import live
from chaoslm.shared_consumer import SharedConsumer
from tournaments import broadcast
from tournaments.models import Tournament


class TournamentConsumer(SharedConsumer):
    model = Tournament

    def group_of(self, thing: Tournament) -> str:
        return live.tournament_group(thing.pk)

    async def first_message(self) -> str:
        return await database_sync_to_async(broadcast.live_html)(self.thing)
