"""The tournament page's websocket: a tournament its viewer may see; the live parts as they stand, with the
rows of the matches page the viewer shows (`?page=`), then pushes."""

from __future__ import annotations

from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from chaoslm import live
from chaoslm.consumers import SharedConsumer
from tournaments import broadcast
from tournaments.models import Tournament


class TournamentConsumer(SharedConsumer):
    model = Tournament

    def group_of(self, thing: Tournament) -> str:
        return live.tournament_group(thing.pk)

    async def first_message(self) -> str:
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        # Paginator.get_page takes anything: what is not a page number means the first page.
        page = query.get("page", ["1"])[0]
        return await database_sync_to_async(broadcast.live_html)(self.thing, page=page)
