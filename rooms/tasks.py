"""A room's Celery tasks for CHAOSLM_RUNNER=celery (the coroutines they run are rooms/work.py's). The room's hold
(rooms/hold.py) makes a duplicate or redelivered task harmless: a second loop for the same room finds it held
and returns."""

from celery import shared_task

from chaoslm.runner import run_on_process_loop
from rooms.work import resume_auto, run_auto, run_round


@shared_task(acks_late=True, reject_on_worker_lost=True)
def room_round(room_id: int) -> None:
    run_on_process_loop(run_round(room_id))


@shared_task(acks_late=True, reject_on_worker_lost=True)
def room_auto(room_id: int) -> None:
    run_on_process_loop(run_auto(room_id))


@shared_task
def resume_auto_rooms() -> list[int]:
    """The periodic sweep (Celery beat): rooms in auto mode whose loop stopped run again."""
    return resume_auto()
