from django.apps import AppConfig


class DebatesConfig(AppConfig):
    name = "debates"

    def ready(self) -> None:
        from chaoslm import runner
        from debates import hold, recovery, tasks

        runner.register("debate", tasks.advance, tasks.advance_debate)
        runner.register(hold.KIND, tasks.start_when_due, tasks.start_held_debate)
        runner.register_sweep(recovery.recover)
