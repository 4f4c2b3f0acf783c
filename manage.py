#!/usr/bin/env python
import gc
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chaoslm.settings")
    # Setting Django up makes objects that live as long as the process, and the collector's passes over them were
    # a quarter of a command's start (`manage.py check`: 320 ms, 234 ms without them; bench/startup.py). So no pass
    # runs until Django is set up, and what setup made is then left out of every later pass (gc.freeze).
    # `runserver` sets Django up itself, under its autoreloader, which waits for a fix instead of exiting; and
    # `--settings` or `--pythonpath` must be read before Django is set up, which Django's own start does.
    gc.disable()
    import django
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

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
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
