from django.apps import AppConfig


class DebatesConfig(AppConfig):
    name = "debates"

    def ready(self) -> None:
        from chaoslm import costs, runner
        from debates import hold, recovery, selectors, work

        # The tasks by their paths: only the Celery runner imports them (and Celery).
        runner.register("debate", work.advance, "debates.tasks.advance_debate")
        runner.register(hold.KIND, work.start_when_due, "debates.tasks.start_held_debate")
        runner.register_sweep(recovery.recover)
        costs.register_spend(selectors.spend)
