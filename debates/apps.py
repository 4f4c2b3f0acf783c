from django.apps import AppConfig


class DebatesConfig(AppConfig):
    name = "debates"

    def ready(self) -> None:
        from chaoslm import runner
        from debates import recovery, tasks

        runner.register("debate", tasks.advance, tasks.advance_debate)
        runner.register_sweep(recovery.recover)
