"""The debate page's websocket: a debate its viewer may see, and the catch-up since the page's newest event."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from chaoslm import live
from chaoslm.consumers import SharedConsumer
from chaoslm.http import parse_id
from debates import poll_hooks, privacy
from debates.broadcast import catch_up_html, group_of
from debates.models import Debate


class DebateConsumer(SharedConsumer):
    model = Debate
    insider = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tally_phases: set[str] = set()

    def group_of(self, thing: Debate) -> str:
        # The owner's and staff's pages and everyone else's listen apart: private thinking the owner keeps
        # from viewers is never pushed to their group (debates/privacy.py).
        via_share = bool(self.scope["url_route"]["kwargs"].get("token"))
        self.insider = privacy.is_insider(self.scope["user"], thing, via_share=via_share)
        return group_of(thing, insider=self.insider)

    async def first_message(self) -> str:
        return await database_sync_to_async(catch_up_html)(self.thing.pk, self._since(), insider=self.insider)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """A voter's page sends the ticket its vote earned: the socket then receives that vote's tally."""
        if self.thing is None:
            return
        phase = poll_hooks.poll().phase_of_message(text_data or "", self.thing.pk)
        if phase is not None and phase not in self.tally_phases:
            self.tally_phases.add(phase)
            await live.join(live.debate_tally_group(self.thing.pk, phase), self.channel_name)

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        for phase in self.tally_phases:
            await live.leave(live.debate_tally_group(self.thing.pk, phase), self.channel_name)

    def _since(self) -> int:
        """The newest event id the page shows; missing, malformed or out of range means from the start."""
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        return parse_id(query.get("since", [""])[0]) or 0
