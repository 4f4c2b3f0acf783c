"""How fast ChaosLM's commands start, against a bare Django project's, measured in the same run.

Each command is a new process with the same interpreter: `manage.py check`, `manage.py debate --help`, and
`django-admin check` on a minimal settings module (two contrib apps, no database), the baseline: what any
Django project pays to start. The runs take turns (one of each, N times), so a machine that gets busier
mid-run slows them all alike; each figure is the median of its N wall times. Goal: at most 1.5x the bare start.
A fourth command, not judged, shows how much of the gap is not ChaosLM's code: `django-admin check` on the
apps, middleware and admin URLs ChaosLM's settings use, without ChaosLM's own apps (the third-party floor).
The heavy libraries (the openai client, daphne and Twisted, redis, markdown-it, numpy, rich, PyYAML, and the
JSON API's django-ninja and pydantic) are imported where they are used, not when Django starts;
`python -X importtime manage.py check` shows what is left. manage.py also freezes what Django's setup made out of
the garbage collector's passes (see manage.py); the django-admin rows do not, as no Django project does by default.

    uv run python bench/startup.py [--runs 9] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import ROOT, parse_args, print_table
from config import settings

GOAL = 1.5
BARE_SETTINGS = """
SECRET_KEY = "bench-startup-bare-settings"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth"]
DATABASES = {}
USE_TZ = True
"""


# ChaosLM's own packages: what the third-party floor leaves out of its settings.
OURS = ("chaoslm", "debates", "rooms", "audience", "batches", "tournaments", "experiments", "comparisons", "api")
FLOOR_URLS = """
from django.contrib import admin
from django.urls import path

urlpatterns = [path("admin/", admin.site.urls)]
"""


def floor_settings(folder: Path) -> str:
    """ChaosLM's settings without its own apps: the third-party apps and middleware, the admin's URLs."""

    def theirs(names: list[str]) -> list[str]:
        return [name for name in names if name.split(".")[0] not in OURS]

    templates = [{**settings.TEMPLATES[0], "DIRS": []}]
    return (
        f"SECRET_KEY = 'bench-startup-floor-settings'\nINSTALLED_APPS = {theirs(settings.INSTALLED_APPS)!r}\n"
        f"MIDDLEWARE = {theirs(settings.MIDDLEWARE)!r}\nTEMPLATES = {templates!r}\n"
        f"AUTHENTICATION_BACKENDS = {settings.AUTHENTICATION_BACKENDS!r}\nROOT_URLCONF = 'floor_urls'\n"
        f"DATABASES = {{'default': {{'ENGINE': 'django.db.backends.sqlite3', 'NAME': {str(folder / 'floor.db')!r}}}}}\n"
        "STATIC_URL = 'static/'\nUSE_TZ = True\n"
    )


def commands(bare: Path) -> dict[str, list[str]]:
    def django_admin_check(settings: str) -> list[str]:
        return [sys.executable, "-m", "django", "check", "--settings", settings, "--pythonpath", str(bare)]

    return {
        "bare django-admin check": django_admin_check("bare_settings"),
        "manage.py check": [sys.executable, "manage.py", "check"],
        "manage.py debate --help": [sys.executable, "manage.py", "debate", "--help"],
        "third-party floor": django_admin_check("floor_settings"),
    }


def wall_time(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {run.returncode}:\n{run.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="runs of each command (the median is shown)")
    args = parse_args(parser, {"runs": 1})
    with tempfile.TemporaryDirectory() as folder:
        bare = Path(folder)
        (bare / "bare_settings.py").write_text(BARE_SETTINGS)
        (bare / "floor_settings.py").write_text(floor_settings(bare))
        (bare / "floor_urls.py").write_text(FLOOR_URLS)
        runs = commands(bare)
        # Bytecode is kept, as on any installed copy, in a folder of this run's own (PYTHONDONTWRITEBYTECODE, where
        # set, would have every run compile every module it imports, which is not what a user's command pays).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(bare / "pycache")
        if not args.smoke:
            for command in runs.values():
                wall_time(command, env)  # once unmeasured: bytecode compiled, files in the page cache
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, command in runs.items():
                times[name].append(wall_time(command, env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    baseline = medians["bare django-admin check"]
    rows = [("bare django-admin check", f"{baseline * 1000:.0f} ms", f"baseline, median of {args.runs}")]
    for name in list(runs)[1:-1]:
        ratio = medians[name] / baseline
        verdict = "within" if ratio <= GOAL else "OVER"
        rows.append((name, f"{medians[name] * 1000:.0f} ms", f"{ratio:.2f}x bare ({verdict} the {GOAL}x goal)"))
    floor = medians["third-party floor"]
    rows.append(
        ("third-party floor", f"{floor * 1000:.0f} ms", f"{floor / baseline:.2f}x bare: its apps, no ChaosLM app")
    )
    print_table(rows)


if __name__ == "__main__":
    main()
