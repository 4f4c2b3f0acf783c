"""The websocket of a page showing one shared thing (a debate, a room, a tournament), by id or share link.

Who may open it is chaoslm/sharing.py's rule, as for the page. A socket also joins the group that closes
it when the owner takes that right away: the share link's (LiveConsumer), or, for a viewer at the thing's
own address who sees it only because it is public, `sharing.public_group` (sharing.set_visibility).
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from chaoslm import live, sharing
from chaoslm.consumers import LiveConsumer


class SharedConsumer(LiveConsumer):
    model: Any  # the shared model class
    thing: Any = None
    public_only: str | None = None

    def group_of(self, thing: Any) -> str:
        """The live group of the page showing `thing`."""
        raise NotImplementedError

    async def allowed_group(self) -> str | None:
        kwargs = self.scope["url_route"]["kwargs"]
        user, token = self.scope["user"], kwargs.get("token")
        thing = await database_sync_to_async(sharing.find_visible)(self.model, user, kwargs.get("pk"), token)
        if thing is None:
            return None
        self.thing = thing
        if sharing.sees_only_while_public(user, thing, token):
            self.public_only = sharing.public_group(thing)
            await live.join(self.public_only, self.channel_name)
        return self.group_of(thing)

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        if self.public_only:
            await live.leave(self.public_only, self.channel_name)
