"""ChaosLM's core: what every app builds on. The Celery app is chaoslm/celery.py (`celery -A chaoslm`
finds it there); chaoslm/runner.py imports it, so tasks are enqueued on it. Importing this package
loads nothing else, so the pure modules below it (chaoslm/llm/messages.py) stay free of Django."""
