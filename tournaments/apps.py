from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "tournaments"

    def ready(self) -> None:
        from chaoslm import runner
        from tournaments import services, tasks

        # Inline, the runner loops a tournament until it settles; on Celery, services keeps its own tick chain.
        runner.register("tournament", services.run_inline, tasks.advance_tournament)
        runner.register_sweep(services.sweep)
        services.connect_signals()
