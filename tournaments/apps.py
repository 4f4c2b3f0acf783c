from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.signals import request_started


def _load_report_libraries_once(**kwargs: Any) -> None:
    request_started.disconnect(_load_report_libraries_once)
    from tournaments import stats

    stats.load_libraries_in_background()


class TournamentsConfig(AppConfig):
    name = "tournaments"

    def ready(self) -> None:
        from chaoslm import runner
        from tournaments import services, tasks

        # Inline, the runner loops a tournament until it settles; on Celery, services keeps its own tick chain.
        runner.register("tournament", services.run_inline, tasks.advance_tournament)
        runner.register_sweep(services.sweep)
        services.connect_signals()
        if settings.CHAOSLM_PRELOAD_REPORT_LIBRARIES:
            request_started.connect(_load_report_libraries_once)
