"""Celery tasks for rooms under CHAOSLM_RUNNER=celery. The room's hold (rooms/engine.py) makes a
duplicate or redelivered task harmless: a second loop for the same room finds it held and returns."""

from celery import shared_task

from debates.runner import run_on_process_loop


@shared_task(acks_late=True, reject_on_worker_lost=True)
def room_round(room_id: int) -> None:
    from rooms.broadcast import RoomBroadcaster
    from rooms.engine import manual_round

    run_on_process_loop(manual_round(room_id, RoomBroadcaster(room_id)))


@shared_task(acks_late=True, reject_on_worker_lost=True)
def room_auto(room_id: int) -> None:
    from rooms.broadcast import RoomBroadcaster
    from rooms.engine import auto_loop

    run_on_process_loop(auto_loop(room_id, RoomBroadcaster(room_id)))
