from django.apps import AppConfig
from django.db.models.signals import post_save, pre_save


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "API"

    def ready(self) -> None:
        from api import webhooks
        from chaoslm import runner
        from debates.models import Debate
        from rooms.models import Room

        runner.register(webhooks.KIND, webhooks.run, webhooks.deliver_webhook)
        # The engine saves a debate's end (chaoslm: no app imports the API, so the API listens).
        post_save.connect(webhooks.on_debate_saved, sender=Debate, dispatch_uid="api-webhooks-debate")
        pre_save.connect(webhooks.on_room_saving, sender=Room, dispatch_uid="api-webhooks-room-saving")
        post_save.connect(webhooks.on_room_saved, sender=Room, dispatch_uid="api-webhooks-room")
