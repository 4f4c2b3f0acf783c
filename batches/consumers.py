"""The live page's socket of any kind of batch that has no consumer of its own: the kind is found in the registry
(batches/kinds.py) by the model name in the address (`/ws/<model>s/<id>/`, `/ws/<model>-share/<token>/`, where
batches/views.py's pages connect), the viewer let in by the page's rule (chaoslm/sharing.py), and the kind's
`live_html` sent first, then its pushes (`BatchKind.push`)."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from batches.kinds import KINDS, BatchKind
from chaoslm.consumers import SharedConsumer


def kind_of_model(model_name: str) -> BatchKind | None:
    return next((k for k in KINDS.values() if k.model._meta.model_name == model_name), None)


class BatchConsumer(SharedConsumer):
    kind: BatchKind

    async def allowed_group(self) -> str | None:
        kind = kind_of_model(self.scope["url_route"]["kwargs"]["model"])
        if kind is None:
            return None
        self.kind, self.model = kind, kind.model
        return await super().allowed_group()

    def group_of(self, thing: Any) -> str:
        return self.kind.group(thing.pk)

    async def first_message(self) -> str:
        return await database_sync_to_async(self.kind.live_html)(self.thing.pk)
