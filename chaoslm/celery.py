"""The Celery app. Workers run with CHAOSLM_RUNNER=celery; the inline runner never touches it."""

import importlib
import os
from typing import Any

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chaoslm.settings")

app = Celery("chaoslm")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def warm_up(**_: Any) -> None:
    """Pay the one-time costs (imports, the CA bundle, the event loop) before the first debate, not during it."""
    from chaoslm.llm.gateway import warm_up as warm_up_gateway
    from debates.runner import inline

    for module in ("debates.broadcast", "debates.engine", "rooms.broadcast", "rooms.engine"):
        importlib.import_module(module)
    warm_up_gateway()
    inline.loop()
