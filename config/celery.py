"""The Celery app. Workers run with CHAOSLM_RUNNER=celery; the inline runner never touches it.

Only the Celery path imports this module: a worker (`celery -A config`), and chaoslm/runner.py's `celery_app`,
by its dotted path (settings.CHAOSLM_CELERY_APP), on a web process's first Celery submit; the apps' tasks
modules are `shared_task`s, bound to it then.
No other process pays for importing Celery (tests/core/test_startup_imports.py).
"""

import os
from typing import Any

from celery import Celery
from celery.signals import worker_ready

from chaoslm import metrics, runner, tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("chaoslm")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Traces (OTEL_EXPORTER_OTLP_ENDPOINT): a task carries its sender's trace on; a no-op when tracing is off.
tracing.setup("worker")
tracing.instrument_celery()


@worker_ready.connect
def _warm_up_worker(**_: Any) -> None:
    runner.warm_up_worker()
    metrics.serve_worker_metrics()
