from django.apps import AppConfig


class RoomsConfig(AppConfig):
    name = "rooms"

    def ready(self) -> None:
        from chaoslm import runner
        from rooms import tasks, work

        runner.register(work.ROUND, tasks.run_round, tasks.room_round)
        runner.register(work.AUTO, tasks.run_auto, tasks.room_auto)
        runner.register_sweep(work.resume_auto)
