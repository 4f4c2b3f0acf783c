"""Commands start fast: `manage.py check` and `manage.py debate --help` do not import the heavy libraries, which
load where they are used (the LLM client on a first call, Celery on the Celery path, the ASGI server when it
serves, the JSON API on its first request or reverse, PyYAML on the first persona file). bench/startup.py
measures the start time; this test keeps the libraries out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import run_manage, run_python

ROOT = Path(__file__).resolve().parents[2]
# Celery and its broker client, the LLM client and its HTTP stack, the ASGI server, the Redis channel layer, the
# local model, the report's statistics, the JSON API's django-ninja and pydantic (and jinja2, which ninja brings
# through django.test), PyYAML, the metrics' and traces' clients (and protobuf's `google`).
HEAVY = (
    "celery",
    "kombu",
    "openai",
    "httpx",
    "daphne",
    "twisted",
    "channels_redis",
    "redis",
    "xllamacpp",
    "numpy",
    "scipy",
    "statsmodels",
    "ninja",
    "pydantic",
    "pydantic_core",
    "jinja2",
    "yaml",
    "prometheus_client",
    "opentelemetry",
    "google",
)
# Parts of Django that only the API brought in: its test client and utilities (ninja's settings import them); the
# reports' statistics, whose frozen dataclasses cost about 12 ms to build (they load at a first report).
HEAVY_MODULES = (
    "django.test",
    "batches.stats",
    "tournaments.stats",
    "tournaments.human",
    "experiments.stats",
    "comparisons.compare_stats",
)


def imported_modules(*args: str, **env: str) -> set[str]:
    """The modules a `manage.py` command imports, as `python -X importtime` lists them."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "manage.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=True,
    )
    return {m[1] for m in re.finditer(r"^import time:.*\|\s*([\w.]+)$", run.stderr, re.MULTILINE)}


def packages(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("command", [("check",), ("debate", "--help")])
def test_a_command_imports_no_heavy_library(command):
    modules = imported_modules(*command)
    loaded = packages(modules)
    assert "django.urls" in modules and "debates" in loaded  # the listing is read right: these are always there
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert modules.isdisjoint(HEAVY_MODULES), sorted(modules & set(HEAVY_MODULES))


def test_configured_for_celery_a_command_still_does_not_import_celery():
    """Celery is imported on a first enqueue, not because the settings name it."""
    loaded = packages(imported_modules("check", CHAOSLM_RUNNER="celery", REDIS_URL="redis://127.0.0.1:6379/0"))
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_the_worker_path_binds_the_tasks_to_the_project_app_and_warms_up():
    """What the worker loads (config/celery.py and the apps' tasks modules) registers every task the runner and
    beat name by path, on the project's app, with the warm-up connected to worker_ready."""
    code = (
        "import django; django.setup()\n"
        "from celery.signals import worker_ready\n"
        "from django.conf import settings\n"
        "from config.celery import app\n"
        "from batches.kinds import TASK\n"
        "from chaoslm.runner import _work\n"
        "app.loader.import_default_modules()\n"  # what a starting worker does: its autodiscovery
        "names = {w.task for w in _work.values() if w.task} | {TASK}\n"
        "names |= {entry['task'] for entry in settings.CELERY_BEAT_SCHEDULE.values()}\n"
        "print(sorted(names - set(app.tasks)))\n"
        "print(any('_warm_up_worker' in repr(r) for r in worker_ready.receivers))\n"
    )
    run = run_python(code)
    assert run.stdout.split("\n")[:2] == ["[]", "True"], run.stdout + run.stderr


def test_a_command_collects_garbage_again_once_django_is_set_up():
    """manage.py holds the collector off while Django sets up, then freezes what setup made: a long command (a
    debate, the server) must not run without one."""
    code = "import gc; print(gc.isenabled(), gc.get_freeze_count() > 10_000)"
    run = run_manage("shell", "--no-imports", "-c", code)
    assert run.stdout.strip() == "True True", run.stdout + run.stderr


def test_a_bad_setting_stops_a_command_with_one_line_that_names_it():
    run = run_manage("check", env={**os.environ, "CHAOSLM_LLM_TIMEOUT": "soon"})
    assert run.returncode == 1
    assert run.stderr == "ChaosLM's settings are wrong: CHAOSLM_LLM_TIMEOUT must be a number, not 'soon'\n"


def test_settings_named_on_the_command_line_are_the_ones_used(tmp_path):
    """manage.py sets Django up early (see above), except where the command line names the settings."""
    (tmp_path / "other_settings.py").write_text("from config.settings import *\nMARKER = 'other'\n")
    code = "from django.conf import settings; print(settings.MARKER)"
    run = run_manage("shell", "--no-imports", "-c", code, "--settings=other_settings", f"--pythonpath={tmp_path}")
    assert run.stdout.strip() == "other", run.stdout + run.stderr


def test_a_command_on_a_database_never_migrated_says_to_migrate_in_one_line(tmp_path):
    """A new user's first `manage.py debate`, before `make run` made the tables."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'new.sqlite3'}"}
    run = run_manage("debate", "duel", "--topic", "Tea?", "--a", "Ada Sterling", "--b", "Marcus Vale", env=env)
    assert run.returncode == 1
    assert run.stderr.startswith("ChaosLM's database is missing tables (no such table: "), run.stderr
    assert run.stderr.endswith("): run `python manage.py migrate` first (`make run` does it).\n")
    assert run.stderr.count("\n") == 1
