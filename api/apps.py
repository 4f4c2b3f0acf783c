from django.apps import AppConfig
from django.db.models.signals import post_save


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "API"

    def ready(self) -> None:
        from api import webhooks
        from chaoslm import runner
        from debates.models import Debate

        # The task by its path: only the Celery runner imports it (and Celery).
        runner.register(webhooks.KIND, webhooks.run, "api.tasks.deliver_webhook")
        # The engine saves a debate's end (chaoslm: no app imports the API, so the API listens).
        post_save.connect(webhooks.on_debate_saved, sender=Debate, dispatch_uid="api-webhooks-debate")
