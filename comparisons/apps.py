from django.apps import AppConfig


class ComparisonsConfig(AppConfig):
    name = "comparisons"

    def ready(self) -> None:
        from batches import kinds
        from comparisons import kind

        kinds.register(kind.COMPARISON)
