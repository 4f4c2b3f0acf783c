"""The tournament page's websocket: a tournament its viewer may see; the live parts as they stand, then pushes."""

from __future__ import annotations

from channels.db import database_sync_to_async

from chaoslm import live, sharing
from chaoslm.consumers import LiveConsumer
from tournaments import broadcast
from tournaments.models import Tournament


class TournamentConsumer(LiveConsumer):
    tournament: Tournament | None = None

    async def allowed_group(self) -> str | None:
        kwargs = self.scope["url_route"]["kwargs"]
        found = await database_sync_to_async(sharing.find_visible)(
            Tournament, self.scope["user"], kwargs.get("pk"), kwargs.get("token")
        )
        if found is None:
            return None
        self.tournament = found
        return live.tournament_group(found.pk)

    async def first_message(self) -> str:
        assert self.tournament is not None
        return await database_sync_to_async(broadcast.live_html)(self.tournament)
