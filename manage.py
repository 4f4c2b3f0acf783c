#!/usr/bin/env python
import gc
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Setting Django up makes objects that live as long as the process, and the collector's passes over them were
    # a quarter of a command's start (`manage.py check`: 320 ms, 234 ms without them; bench/startup.py). So no pass
    # runs until Django is set up, and what setup made is then left out of every later pass (gc.freeze).
    # `runserver` sets Django up itself, under its autoreloader, which waits for a fix instead of exiting; and
    # `--settings` or `--pythonpath` must be read before Django is set up, which Django's own start does.
    gc.disable()
    import django
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError, ProgrammingError

    django_sets_up = sys.argv[1:2] == ["runserver"] or any(
        argument.startswith(("--settings", "--pythonpath")) for argument in sys.argv[1:]
    )
    try:
        if not django_sets_up:
            django.setup()
    except ImproperlyConfigured as error:
        sys.exit(f"ChaosLM's settings are wrong: {error}")
    finally:
        gc.freeze()
        gc.enable()
    try:
        execute_from_command_line(sys.argv)
    except (OperationalError, ProgrammingError) as error:
        # A new database (a command run before `make run`), or one an upgrade brought new migrations for: Django's
        # traceback would bury the one step that helps. SQLite says "no such table", PostgreSQL "relation ... does
        # not exist".
        text = str(error).strip()
        if "no such table" not in text and not ("relation" in text and "does not exist" in text):
            raise
        sys.exit(
            f"ChaosLM's database is missing tables ({text.splitlines()[0]}): run `python manage.py migrate` first "
            "(`make run` does it)."
        )


if __name__ == "__main__":
    main()
