"""The debate page's websocket: a debate its viewer may see, and the catch-up since the page's newest event."""

from __future__ import annotations

from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from chaoslm import live
from chaoslm.consumers import SharedConsumer
from chaoslm.http import parse_id
from debates.broadcast import catch_up_html
from debates.models import Debate


class DebateConsumer(SharedConsumer):
    model = Debate

    def group_of(self, thing: Debate) -> str:
        return live.debate_group(thing.pk)

    async def first_message(self) -> str:
        return await database_sync_to_async(catch_up_html)(self.thing.pk, self._since())

    def _since(self) -> int:
        """The newest event id the page shows; missing, malformed or out of range means from the start."""
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        return parse_id(query.get("since", [""])[0]) or 0
