"""The debate page's websocket: a debate its viewer may see, and the catch-up since the page's newest event."""

from __future__ import annotations

from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from chaoslm import live, sharing
from chaoslm.consumers import LiveConsumer
from chaoslm.http import parse_id
from debates.broadcast import catch_up_html
from debates.models import Debate


class DebateConsumer(LiveConsumer):
    debate_id: int = 0

    async def allowed_group(self) -> str | None:
        kwargs = self.scope["url_route"]["kwargs"]
        debate = await database_sync_to_async(sharing.find_visible)(
            Debate, self.scope["user"], kwargs.get("pk"), kwargs.get("token")
        )
        if debate is None:
            return None
        self.debate_id = debate.pk
        return live.debate_group(debate.pk)

    async def first_message(self) -> str:
        return await database_sync_to_async(catch_up_html)(self.debate_id, self._since())

    def _since(self) -> int:
        """The newest event id the page shows; missing, malformed or out of range means from the start."""
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        return parse_id(query.get("since", [""])[0]) or 0
