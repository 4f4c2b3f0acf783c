"""Where debates run. The engine is one async function; this module only decides where it runs.

- `inline` (the embedded default): an asyncio loop in a background thread of the web process.
- `celery`: a task per debate advance (debates/tasks.py), enqueued after the transaction commits. A
  worker runs its tasks' coroutines on one event loop per process (`run_on_process_loop`), as the web
  process does, rather than a loop per task thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import CancelledError, Future
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction

from chaoslm import live

logger = logging.getLogger("chaoslm.runner")


class InlineRunner:
    """Runs debates on the web server's own event loop (or, outside a server, a loop in a daemon thread);
    each debate runs at most once at a time."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._running: dict[int, Future[None]] = {}
        self._again: set[int] = set()
        self._tasks: dict[str, Future[None]] = {}

    def loop(self) -> asyncio.AbstractEventLoop:
        serving = live.serving_loop()
        if serving is not None:
            return serving
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="chaoslm-inline-runner", daemon=True)
                thread.start()
                self._loop = loop
            return self._loop

    def submit(self, debate_id: int) -> None:
        loop = self.loop()
        with self._lock:
            if debate_id in self._running:
                # Running already: run once more when it stops, so a change it did not see is not lost.
                self._again.add(debate_id)
                return
            self._running[debate_id] = asyncio.run_coroutine_threadsafe(self._run(debate_id), loop)

    def run_task(self, key: str, factory: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Run `factory()` on the loop unless a task under `key` is running (rooms use this)."""
        loop = self.loop()
        with self._lock:
            if key in self._tasks and not self._tasks[key].done():
                return
            self._tasks[key] = asyncio.run_coroutine_threadsafe(self._guarded(key, factory), loop)

    def cancel_task(self, key: str) -> None:
        """Stop the task under `key` at once; what it was generating is dropped."""
        with self._lock:
            future = self._tasks.get(key)
        if future is not None:
            future.cancel()

    async def _guarded(self, key: str, factory: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        try:
            await factory()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("task %s failed", key)
        finally:
            await asyncio.to_thread(close_old_connections)

    async def _run(self, debate_id: int) -> None:
        from debates.broadcast import DebateBroadcaster
        from debates.engine import run_debate

        try:
            while True:
                try:
                    await run_debate(debate_id, DebateBroadcaster(debate_id))
                except Exception:
                    logger.exception("debate %s: the inline runner's run failed", debate_id)
                with self._lock:
                    if debate_id not in self._again:
                        del self._running[debate_id]
                        return
                    self._again.discard(debate_id)
        finally:
            await asyncio.to_thread(close_old_connections)

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Block until no debate is running (tests and shutdown)."""
        with self._lock:
            futures = [*self._running.values(), *self._tasks.values()]
        for future in futures:
            with contextlib.suppress(CancelledError):
                future.result(timeout)


inline = InlineRunner()


def run_on_process_loop(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run `coroutine` on this process's one event loop and wait for its result (Celery tasks do this).

    With a loop per task thread, a worker's debates would each hold a database connection and their
    threads would fight over the GIL (twice the CPU a call); on one loop they interleave, as in the web
    process, and share one connection through sync_to_async's thread.
    """
    return asyncio.run_coroutine_threadsafe(coroutine, inline.loop()).result()


def start_room_round(room_id: int) -> None:
    """Every participating agent of the room answers, on the configured runner."""
    from rooms.engine import manual_round
    from rooms.tasks import room_round

    _start_room(room_id, room_round, manual_round)


def start_room_auto(room_id: int) -> None:
    """Run the room's auto mode on the configured runner (a no-op if a loop already runs it)."""
    from rooms.engine import auto_loop
    from rooms.tasks import room_auto

    _start_room(room_id, room_auto, auto_loop)


def _start_room(room_id: int, task: Any, run: Callable[..., Coroutine[Any, Any, Any]]) -> None:
    if settings.CHAOSLM_RUNNER == "celery":
        transaction.on_commit(lambda: task.delay(room_id))
    else:
        from rooms.broadcast import RoomBroadcaster

        transaction.on_commit(
            lambda: inline.run_task(_room_key(room_id), lambda: run(room_id, RoomBroadcaster(room_id)))
        )


def stop_room(room_id: int) -> None:
    """Stop the room's generation now, if it runs here; a worker's loop stops itself on the mode change."""
    inline.cancel_task(_room_key(room_id))


def _room_key(room_id: int) -> str:
    return f"room-{room_id}"


def start(debate_id: int) -> None:
    """Run (or continue) a debate on the configured runner, once the current transaction commits."""
    if settings.CHAOSLM_RUNNER == "celery":
        from debates.tasks import advance_debate

        transaction.on_commit(lambda: advance_debate.delay(debate_id))
    else:
        transaction.on_commit(lambda: inline.submit(debate_id))
