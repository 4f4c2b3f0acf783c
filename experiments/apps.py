from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "experiments"

    def ready(self) -> None:
        from chaoslm import runner
        from experiments import tasks, work

        # Inline, the runner loops an experiment until it settles; on Celery, the batch keeps its own tick chain.
        runner.register("experiment", work.run_inline, tasks.advance_experiment)
        runner.register_sweep(work.sweep)
        work.connect_signals()
