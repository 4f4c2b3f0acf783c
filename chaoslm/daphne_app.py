"""Daphne's place in INSTALLED_APPS, without the cost of daphne's own app module.

Daphne is an app for one reason: its `runserver` (websockets included), which `serve` runs, replaces
Django's. Its own app config imports its server, and with it Twisted and Autobahn, in every command
(a third of `manage.py check`'s start). This config names the same app, so its `runserver` is found as
before, and the server is imported when that command loads, before it serves: the asyncio reactor is
still installed before anything imports Twisted's.
"""

from django.apps import AppConfig


class DaphneConfig(AppConfig):
    name = "daphne"
    verbose_name = "Daphne"
