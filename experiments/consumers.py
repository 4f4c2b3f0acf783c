"""The experiment page's websocket: an experiment its viewer may see; its progress as it stands, then pushes."""

from __future__ import annotations

from channels.db import database_sync_to_async

from chaoslm.consumers import SharedConsumer
from experiments import broadcast
from experiments.models import Experiment


class ExperimentConsumer(SharedConsumer):
    model = Experiment

    def group_of(self, thing: Experiment) -> str:
        return broadcast.group(thing.pk)

    async def first_message(self) -> str:
        return await database_sync_to_async(broadcast.live_html)(self.thing)
