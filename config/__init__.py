"""The project's wiring: settings, the URLconf, the ASGI application, the websocket routes and the Celery app.

It sits above every app and gathers them (docs/architecture.md); nothing imports it but Django, daphne and
Celery, which name it by its dotted path (`DJANGO_SETTINGS_MODULE=config.settings`, `config.asgi:application`,
`celery -A config`).
"""
