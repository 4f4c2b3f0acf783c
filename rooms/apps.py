from django.apps import AppConfig


class RoomsConfig(AppConfig):
    name = "rooms"

    def ready(self) -> None:
        from chaoslm import costs, runner
        from rooms import selectors, work

        # The tasks by their paths: only the Celery runner imports them (and Celery).
        runner.register(work.ROUND, work.run_round, "rooms.tasks.room_round")
        runner.register(work.AUTO, work.run_auto, "rooms.tasks.room_auto")
        runner.register_sweep(work.resume_auto)
        costs.register_spend(selectors.spend)
