"""A room's work for the runner (chaoslm/runner.py): a manual round and the auto loop, and their Celery tasks
for CHAOSLM_RUNNER=celery. The room's hold (rooms/hold.py) makes a duplicate or redelivered task harmless:
a second loop for the same room finds it held and returns."""

from celery import shared_task

from chaoslm.runner import run_on_process_loop
from rooms.broadcast import RoomBroadcaster
from rooms.engine import auto_loop, manual_round
from rooms.work import quietly_if_deleted, resume_auto


async def run_round(room_id: int) -> None:
    await quietly_if_deleted(room_id, manual_round(room_id, RoomBroadcaster(room_id)))


async def run_auto(room_id: int) -> None:
    await quietly_if_deleted(room_id, auto_loop(room_id, RoomBroadcaster(room_id)))


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
