from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "experiments"

    def ready(self) -> None:
        from batches import kinds
        from experiments import work

        kinds.register(work.EXPERIMENT)
