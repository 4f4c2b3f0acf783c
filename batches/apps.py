from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.signals import request_started


def _load_report_libraries_once(**kwargs: Any) -> None:
    request_started.disconnect(_load_report_libraries_once)
    from batches import stats

    stats.load_libraries_in_background()


class BatchesConfig(AppConfig):
    name = "batches"

    def ready(self) -> None:
        from batches import kinds

        # Each kind registers itself from its own app's ready (tournaments/apps.py, experiments/apps.py).
        kinds.connect_signals()
        if settings.CHAOSLM_PRELOAD_REPORT_LIBRARIES:
            request_started.connect(_load_report_libraries_once)
