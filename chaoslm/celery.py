"""The Celery app. Workers run with CHAOSLM_RUNNER=celery; the inline runner never touches it.

Apps register their tasks with chaoslm/runner.py, which warms a worker up before its first task.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chaoslm.settings")

app = Celery("chaoslm")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
