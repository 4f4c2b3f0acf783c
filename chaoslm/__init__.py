"""ChaosLM's core: what every app builds on. The Celery app is config/celery.py (`celery -A config`
finds it there); only the Celery path imports it (a worker, and `runner.celery_app` by its dotted path).
Importing this package loads nothing else, so the pure modules below it (chaoslm/llm/messages.py) stay free
of Django, and no command pays for Celery."""
