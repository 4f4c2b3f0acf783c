"""Where work runs. Apps register their own work; this module only decides where it runs.

An app registers each kind of work it has once, in its `AppConfig.ready()`:

    runner.register("debate", work.advance, "debates.tasks.advance_debate")

- `run(object_id)` is the coroutine that does the work (a debate's advance, a room's round);
- `task` is the dotted path of the Celery task that calls `run_on_process_loop(run(object_id))` on a worker.
  It is a path, imported on the Celery runner's first submit, so that no other process (the inline web
  server, every `manage.py` command) pays for importing Celery; a tasks module binds its tasks to
  config/celery.py's app, which also warms a worker up before its first task (`warm_up_worker`).

Then `runner.submit(kind, object_id)` runs it once the current transaction commits, on the runner
CHAOSLM_RUNNER names:

- `inline` (the embedded default): on the web server's own event loop (or, outside a server, a loop
  in a daemon thread). At most one run per (kind, id) at a time; a submit while it runs asks for one
  more run when it stops, so a change the running one did not see is not lost.
- `celery`: the registered task is enqueued. A worker runs its tasks' coroutines on one event loop per
  process (`run_on_process_loop`), as the web process does, rather than a loop per task thread.

`runner.cancel(kind, object_id)` stops an inline run at once; work on a worker must notice by itself
(rooms' hold does), so `runner.delete_under_work` deletes rows a worker may still be writing under.
`register_sweep` adds a function that finds stalled work and submits it again;
the inline runner sweeps when the web server starts and every CHAOSLM_SWEEP_EVERY seconds after; Celery beat runs
each app's sweep task.

Every run gets connections of its own: an LLM connection pool (`own_connections`), and the database
connection is closed when it ends, as Django does at the end of a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import logging
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, close_old_connections, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.module_loading import import_string

from chaoslm import live, logging_context, metrics_sources, tracing
from chaoslm.llm import own_connections, slots
from chaoslm.llm.gateway import warm_up

logger = logging.getLogger("chaoslm.runner")

Run = Callable[[int], Awaitable[Any]]


@dataclass(frozen=True)
class Work:
    run: Run
    task: str | None  # the dotted path of a Celery task taking the object's id; None: never enqueued this way


_work: dict[str, Work] = {}
_sweeps: list[Callable[[], Any]] = []


def register(kind: str, run: Run, task: str | None) -> None:
    """Say how to run work of `kind`: `run(id)` inline, the task at the dotted path `task` (`.delay(id)`) on Celery."""
    _work[kind] = Work(run, task)


def register_sweep(sweep: Callable[[], Any]) -> None:
    """A function that finds this app's stalled work and submits it again."""
    if sweep not in _sweeps:
        _sweeps.append(sweep)


def celery_app() -> Any:
    """The project's Celery app (settings.CHAOSLM_CELERY_APP), imported on first use: the wiring sits above the
    core, which names it only by its dotted path, as Django names the URLconf."""
    return import_string(settings.CHAOSLM_CELERY_APP)


def submit(kind: str, object_id: int, *, at: datetime | None = None) -> None:
    """Run (or continue) `kind` work on `object_id` on the configured runner, once the transaction commits.

    `at`: not before then (a debate's hold): Celery holds the task until its ETA, the inline run sleeps until
    then. A restart loses an inline sleep: the app's sweep submits such work again."""
    work = _work[kind]
    if settings.CHAOSLM_RUNNER == "celery":
        celery_app()  # the project's app, so that the shared task sends to its broker
        task = import_string(work.task)
        if at is not None:
            transaction.on_commit(lambda: task.apply_async((object_id,), eta=at))
        else:
            transaction.on_commit(lambda: task.delay(object_id))
    else:
        transaction.on_commit(lambda: inline.submit(kind, object_id, at=at))


# Seconds a waiting cancel gives an inline run to have stopped: every delete waits this long, so that no model
# call of the run comes after the delete.
STOP_WAIT = 5.0


def cancel(kind: str, object_id: int, wait: bool = False) -> None:
    """Stop the inline run of `kind` work on `object_id` at once, if there is one; what it was doing is dropped.
    With `wait`, wait up to STOP_WAIT seconds for it to have stopped (InlineRunner.cancel)."""
    inline.cancel(kind, object_id, STOP_WAIT if wait else 0.0)


DELETE_ATTEMPTS = 5


def delete_under_work(*rows: QuerySet[Any]) -> None:
    """Delete the rows in one transaction, though work on a Celery worker may still be writing under them.

    Such work stops only at its next write that finds its rows gone. Until then, on PostgreSQL, it may commit a
    row (a debate's event) between the cascade's delete of that table and of its parent (the event's seat); the
    parent's deferred foreign-key check then fails at commit. The cascade is collected again and tried again, and
    the worker's next write finds the rows gone."""
    for attempt in range(1, DELETE_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                for queryset in rows:
                    queryset.delete()
            return
        except IntegrityError:
            if attempt == DELETE_ATTEMPTS:
                raise
            logger.info("a row was written under a delete (attempt %s); deleting again", attempt)


def sweep() -> None:
    """Run every registered sweep (each submits what it finds)."""
    for find in _sweeps:
        try:
            find()
        except Exception:
            logger.exception("sweep %s failed", getattr(find, "__qualname__", find))


def identity() -> str:
    """This process as the work it runs records it (a running debate's `runner`): its host, pid and start time."""
    me = slots.me()
    return f"{socket.gethostname()}:{me['pid']}:{me['started']}"


def gone(runner: str) -> bool | None:
    """Whether the process `runner` (an `identity`) has ended: a process that ended is known at once, not after
    its work has been idle a while. None when it cannot be told: none recorded, or a process on another host."""
    host, _, rest = runner.partition(":")
    pid, _, started = rest.partition(":")
    if not runner or host != socket.gethostname() or not pid.isdigit():
        return None
    return not slots.alive({"pid": int(pid), "started": started})


class InlineRunner:
    """Runs work on the web server's own event loop (or, outside a server, a loop in a daemon thread)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._running: dict[tuple[str, int], Future[None]] = {}
        # Set when a run's coroutine has ended: a future cancelled from another thread is marked cancelled at
        # once, while its coroutine stops only when the loop gets to it.
        self._stopped: dict[tuple[str, int], threading.Event] = {}
        self._again: set[tuple[str, int]] = set()

    def loop(self) -> asyncio.AbstractEventLoop:
        serving = live.serving_loop()
        if serving is not None:
            return serving
        with self._lock:
            if self._loop is None:
                warm_up()  # here, not on the loop: its first call would stop every run on it meanwhile
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="chaoslm-inline-runner", daemon=True)
                thread.start()
                self._loop = loop
            return self._loop

    def submit(self, kind: str, object_id: int, at: datetime | None = None) -> None:
        key = (kind, object_id)
        loop = self.loop()
        with self._lock:
            if key in self._running and not self._running[key].done():
                # Running already: run once more when it stops, so a change it did not see is not lost.
                self._again.add(key)
                return
            stopped = self._stopped[key] = threading.Event()
            carried = tracing.carry()
            # The run starts in an empty context, not a copy of the submitter's: a submit from inside a
            # sync_to_async call (a signal of a save in the engine's database thread: a debate's end telling its
            # webhooks, a batch's pass starting debates) would hand the run that call's "single thread executor
            # in use" mark, and every sync_to_async of the run would fail with "would deadlock". The trace goes on
            # explicitly (`carried`).
            self._running[key] = contextvars.Context().run(
                asyncio.run_coroutine_threadsafe, self._run(key, stopped, at, carried), loop
            )

    def cancel(self, kind: str, object_id: int, wait: float = 0.0) -> None:
        """Cancel the run and, called off the loop, wait up to `wait` seconds for it to stop: until then it
        could still send a model call or write a row, after the caller's next step (a delete) has begun. Only a
        caller that holds no lock the run's last steps could want waits (a delete does not)."""
        key = (kind, object_id)
        with self._lock:
            self._again.discard(key)
            future = self._running.get(key)
            stopped = self._stopped.get(key)
        if future is None:
            return
        future.cancel()
        if wait and stopped is not None and not self._on_loop():
            stopped.wait(wait)

    def _on_loop(self) -> bool:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return False
        return running is self._loop or running is live.serving_loop()

    async def _run(
        self, key: tuple[str, int], stopped: threading.Event, at: datetime | None = None, carried: Any = None
    ) -> None:
        # The submitter's trace (the request that started the work), when tracing is on; the work, in its log lines.
        with tracing.resumed(carried), logging_context.bound(**{key[0]: key[1]}):
            await self._runs(key, stopped, at)

    async def _runs(self, key: tuple[str, int], stopped: threading.Event, at: datetime | None) -> None:
        kind, object_id = key
        try:
            if at is not None:
                await asyncio.sleep(max(0.0, (at - timezone.now()).total_seconds()))
            while True:
                try:
                    async with own_connections():
                        await _work[kind].run(object_id)
                except Exception:
                    logger.exception("%s %s: the inline runner's run failed", kind, object_id)
                with self._lock:
                    if key not in self._again:
                        del self._running[key]
                        return
                    self._again.discard(key)
        except asyncio.CancelledError:
            with self._lock:
                # Cancelled: a submit since then may have started a new run under the same key; keep that one.
                if key in self._running and self._running[key].done():
                    del self._running[key]
            raise
        finally:
            stopped.set()
            with self._lock:
                if self._stopped.get(key) is stopped:
                    del self._stopped[key]
            await asyncio.to_thread(close_old_connections)

    def in_flight(self) -> int:
        """How many runs this process has started and not finished (/metrics' queue depth, inline)."""
        with self._lock:
            return sum(not future.done() for future in self._running.values())

    def is_running(self, kind: str, object_id: int) -> bool:
        """Whether this process runs `kind` work on `object_id` now (a sweep leaves such work alone)."""
        with self._lock:
            future = self._running.get((kind, object_id))
        return future is not None and not future.done()

    def settle(self, timeout: float) -> int:
        """Wait up to `timeout` seconds for this process's runs to end (a command about to exit lets its webhook
        deliveries go out); how many still run then."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                left = [f for f in self._running.values() if not f.done()]
            if not left or time.monotonic() >= deadline:
                return len(left)
            time.sleep(0.05)

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Block until nothing is running (tests and shutdown)."""
        with self._lock:
            futures = list(self._running.values())
        for future in futures:
            with contextlib.suppress(CancelledError):
                future.result(timeout)


inline = InlineRunner()


_sweeping: asyncio.Task[None] | None = None


def sweep_when_serving() -> None:
    """Called on the server's loop as it starts serving (config/asgi.py): inline work a restart stopped starts
    again at once, and the sweep runs again every CHAOSLM_SWEEP_EVERY seconds while the server serves (work of a
    command that was killed, a delivery overdue). Under Celery, beat runs each app's sweep instead."""
    global _sweeping
    if settings.CHAOSLM_RUNNER != "celery" and _sweeping is None:
        # Its own context: not the first request's, which it outlives.
        _sweeping = contextvars.Context().run(asyncio.get_running_loop().create_task, _sweep_every())


async def _sweep_every() -> None:
    loop = asyncio.get_running_loop()
    while True:
        await loop.run_in_executor(None, _sweep_and_close)
        await asyncio.sleep(settings.CHAOSLM_SWEEP_EVERY)


def _sweep_and_close() -> None:
    try:
        sweep()
    finally:
        close_old_connections()


def run_on_process_loop(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run `coroutine` on this process's one event loop and wait for its result (Celery tasks do this).

    With a loop per task thread, a worker's debates would each hold a database connection and their
    threads would fight over the GIL (twice the CPU a call); on one loop they interleave, as in the web
    process, and share one connection through sync_to_async's thread.
    """

    carried = tracing.carry()  # the task's trace (opentelemetry-instrumentation-celery), onto the loop

    async def own() -> Any:
        with tracing.resumed(carried):
            async with own_connections():
                return await coroutine

    return asyncio.run_coroutine_threadsafe(own(), inline.loop()).result()


def queue_depth() -> list[metrics_sources.GaugeReading]:
    """/metrics: work waiting for the runner: Celery's queue in Redis, or the inline runs this process has in flight."""
    reading = metrics_sources.GaugeReading(
        "chaoslm_runner_queue_depth",
        "Work waiting for the runner (celery: tasks in the broker's queue; inline: runs in flight here)",
        ["runner"],
    )
    if settings.CHAOSLM_RUNNER == "celery":
        import redis

        client = redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_connect_timeout=1, socket_timeout=1)
        try:
            reading.rows.append((["celery"], client.llen("celery")))
        except redis.RedisError:
            return []  # the broker is down: /readyz says so, and the missing series here
        finally:
            client.close()
    else:
        reading.rows.append((["inline"], inline.in_flight()))
    return [reading]


metrics_sources.register(queue_depth)


def warm_up_worker() -> None:
    """Pay the one-time costs (the CA bundle, the event loop) before a worker's first task, not during it
    (config/celery.py calls it once the worker is ready).

    The apps' modules are loaded already: Django's setup ran their `ready()`, which registered their work,
    and the worker imported their tasks modules.
    """
    warm_up()
    inline.loop()
    # What is loaded by now lives as long as the worker, as in the web process (config/asgi.py): frozen,
    # the collector's full passes stop rescanning it (~177k objects), each of which stalled every debate
    # on this worker's loop for 200-300 ms.
    gc.freeze()
