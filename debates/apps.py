from django.apps import AppConfig


class DebatesConfig(AppConfig):
    name = "debates"

    def ready(self) -> None:
        from chaoslm import runner
        from debates import recovery, work

        # The task by its path: only the Celery runner imports it (and Celery).
        runner.register("debate", work.advance, "debates.tasks.advance_debate")
        runner.register_sweep(recovery.recover)
