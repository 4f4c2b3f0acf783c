"""The webhooks' Celery task for CHAOSLM_RUNNER=celery (the coroutine it runs is api/webhooks.py's `run`)."""

from celery import shared_task

from api.webhooks import run, sweep
from chaoslm.runner import run_on_process_loop


@shared_task(acks_late=True)
def deliver_webhook(delivery_id: int) -> None:
    run_on_process_loop(run(delivery_id))


@shared_task
def sweep_webhooks() -> list[int]:
    """The periodic sweep (Celery beat): pending deliveries whose next attempt is overdue are tried again."""
    return sweep()
