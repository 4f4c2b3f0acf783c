from django.apps import AppConfig
from django.db.models.signals import post_save, pre_save


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "API"

    def ready(self) -> None:
        from api import batch_events, webhooks
        from batches import kinds
        from chaoslm import runner
        from debates.models import Debate
        from rooms.models import Room

        # The task by its path: only the Celery runner imports it (and Celery).
        runner.register(webhooks.KIND, webhooks.run, "api.tasks.deliver_webhook")
        runner.register_sweep(webhooks.sweep)
        # The engine saves a debate's end (chaoslm: no app imports the API, so the API listens).
        post_save.connect(webhooks.on_debate_saved, sender=Debate, dispatch_uid="api-webhooks-debate")
        pre_save.connect(webhooks.on_room_saving, sender=Room, dispatch_uid="api-webhooks-room-saving")
        post_save.connect(webhooks.on_room_saved, sender=Room, dispatch_uid="api-webhooks-room")
        # A batch's pass saves its completion: of each kind registered so far (in its app's ready) and any later.
        kinds.each_kind(
            lambda kind: post_save.connect(
                webhooks.on_batch_saved, sender=kind.model, dispatch_uid=f"api-webhooks-{kind.kind}"
            )
        )
        batch_events.connect_signals()
