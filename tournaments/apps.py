from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "tournaments"

    def ready(self) -> None:
        from batches import kinds
        from tournaments import services

        kinds.register(services.TOURNAMENT)
