"""A Celery worker, once ready, freezes what it loaded at start-up, as the web process does (config/asgi.py)."""

from __future__ import annotations

import gc

from celery.signals import worker_ready

import config.celery  # noqa: F401  (what a worker loads: it connects the warm-up to worker_ready)


def test_a_ready_worker_has_frozen_its_start_up_objects():
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    try:
        worker_ready.send(sender=None)  # what celery's worker sends once its consumer is ready
        assert gc.get_freeze_count() > 10_000  # Django, the apps, the LLM client
    finally:
        gc.unfreeze()
