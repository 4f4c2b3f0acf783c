"""The line in front of a model server that answers a fixed number of requests at a time (the embedded model:
llama.cpp's server answers as many as it has slots, `LocalModel.slots`, one a core by default).

Without it the calls queue inside the server, where the wait counts against the read timeout: a duel's
judge call timed out twice (60 s, then 90 s) while a room used the model. Here a call waits for a slot before
it sends anything, so the timeout starts when it has one, and it knows its place: how many calls must be done
before it is answered (with every slot busy and two calls waiting before it on a server of two slots: three; the
first of the three frees a slot for the first waiting call, and so on). A call that ends early (its timeout, a dropped
connection) keeps its slot until the server has finished what it asked for, on a server that writes a reply
asked for whole to its end even when nobody waits for it any more (llama-cpp-python's did; llama.cpp's own
server notices a caller gone within a second and stops, and its /v1/models answers at once).

Every process on this machine that calls the server shares one line (the web server, `manage.py debate`,
Celery workers): a small JSON file in the temp directory, next to the supervisor's status file, read and
changed under an flock. A file because the embedded model is the single-machine default: it needs no Redis,
and a process that dies holding a slot (kill -9) cannot block the model, since each entry names its process
(pid and start time) and the next reader drops the entries of processes that are gone. Within a process a
freed slot wakes its waiters at once; a slot freed by another process is seen at the next look, `POLL`
seconds at most.

No Django here: the gateway loads without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# Seconds between two looks at the line while waiting: the longest a slot freed by another process stays idle.
POLL = 0.2
# The longest a call that ended early keeps its slot while the server finishes what it had asked for.
IDLE_WAIT = 300.0

_NO_GATE: AbstractAsyncContextManager[None] = contextlib.nullcontext()

# This process's waiters, woken when a call here frees a slot: (their loop, their event).
_waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
_waiters_lock = threading.Lock()


def line_path(base_url: str) -> Path:
    """The file holding the line of the server at `base_url`."""
    parts = urlsplit(base_url)
    where = re.sub(r"[^A-Za-z0-9.-]", "_", f"{parts.hostname}-{parts.port}")
    return Path(tempfile.gettempdir()) / f"chaoslm-slots-{where}.json"


def started(pid: int) -> str:
    """When process `pid` started (clock ticks since boot, from /proc), or "" where that cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19]


_own_start: dict[int, str] = {}


def me() -> dict[str, Any]:
    """This process as an entry names it (its pid and start time)."""
    pid = os.getpid()
    if pid not in _own_start:  # per pid: a forked Celery worker is a process of its own
        _own_start[pid] = started(pid)
    return {"pid": pid, "started": _own_start[pid]}


def alive(entry: dict[str, Any]) -> bool:
    """Whether the process an entry names is still running: a process since given its pid is not it."""
    pid = entry.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return entry.get("started") == me()["started"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    # A new process that was given the pid of a dead one is not the one that joined.
    since = started(pid)
    return not since or since == entry.get("started", since)


@contextlib.contextmanager
def locked_json(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON object in the file at `path` (empty if it is missing or unreadable), locked against every other
    process, written back when the block ends without an error."""
    with path.open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.seek(0)
            try:
                state = json.loads(handle.read() or "{}")
            except ValueError:
                state = {}  # a process killed mid-write: what it held is lost, the others go on
            if not isinstance(state, dict):
                state = {}
            yield state
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps(state))
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _line(base_url: str) -> Iterator[dict[str, Any]]:
    """The line, locked against every other process, its entries of processes that are gone dropped."""
    with locked_json(line_path(base_url)) as state:
        state["entries"] = [e for e in state.get("entries", []) if isinstance(e, dict) and alive(e)]
        yield state


def _join(base_url: str) -> int:
    with _line(base_url) as state:
        ticket = int(state.get("next", 0))
        state["next"] = ticket + 1
        state["entries"].append({"ticket": ticket, **me(), "held": False})
    return ticket


def _look(base_url: str, slots: int, ticket: int) -> int:
    """How many calls must be done (answered, or given a slot) before `ticket` has one; 0 when it now holds a slot
    (taken here)."""
    with _line(base_url) as state:
        entries = state["entries"]
        mine = next((e for e in entries if e["ticket"] == ticket and e["pid"] == os.getpid()), None)
        if mine is None:  # the file was lost or reset under us: join again, keeping our number
            mine = {"ticket": ticket, **me(), "held": False}
            entries.append(mine)
        if mine["held"]:
            return 0
        held = sum(1 for e in entries if e["held"])
        before = sum(1 for e in entries if not e["held"] and e["ticket"] < ticket)
        if held < slots and before == 0:
            mine["held"] = True
            return 0
        # The calls waiting before it each take the next free slot; it takes the one after them.
        return max(1, held + before - slots + 1)


def _leave(base_url: str, ticket: int) -> None:
    with _line(base_url) as state:
        state["entries"] = [e for e in state["entries"] if not (e["ticket"] == ticket and e["pid"] == os.getpid())]
    with _waiters_lock:
        waiters = list(_waiters)
    for loop, event in waiters:
        with contextlib.suppress(RuntimeError):  # a loop that has closed meanwhile
            loop.call_soon_threadsafe(event.set)


def slot(base_url: str, slots: int, on_queued: Callable[[int], None] | None) -> AbstractAsyncContextManager[None]:
    """Hold one of the `slots` of the server at `base_url` for the block; `slots` 0 means no line at all.

    While the call waits, `on_queued(ahead)` is told how many calls must be done before it (`_look`) each time
    that changes,
    then `on_queued(0)` once it has its slot. A call that finds a slot free waits for nothing and is told nothing.
    """
    if slots <= 0:
        return _NO_GATE
    return _held(base_url, slots, on_queued)


@contextlib.asynccontextmanager
async def _held(base_url: str, slots: int, on_queued: Callable[[int], None] | None) -> AsyncIterator[None]:
    ticket = _join(base_url)
    try:
        ahead = _look(base_url, slots, ticket)
        if ahead:
            await _wait(base_url, slots, ticket, ahead, on_queued)
        try:
            yield
        except Exception:
            await _until_idle(base_url)
            raise
    finally:
        _leave(base_url, ticket)


async def _until_idle(base_url: str) -> None:
    """After a call that ended early (a timeout, a dropped connection): wait, holding its slot, until the server
    is done with it, where a server writes a reply asked for whole to its end even when its caller has left (the
    next call's timeout would run meanwhile) and its /v1/models waits for the model as a completion does."""
    import httpx2 as httpx  # only here: a command that calls no model need not load it

    with contextlib.suppress(httpx.HTTPError):
        async with httpx.AsyncClient(timeout=IDLE_WAIT) as client:
            await client.get(f"{base_url}/models")


async def _wait(base_url: str, slots: int, ticket: int, ahead: int, on_queued: Callable[[int], None] | None) -> None:
    wake = asyncio.Event()
    waiter = (asyncio.get_running_loop(), wake)
    with _waiters_lock:
        _waiters.add(waiter)
    told = 0
    try:
        while ahead:
            if ahead != told and on_queued is not None:
                on_queued(ahead)
            told = ahead
            wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), POLL)
            ahead = _look(base_url, slots, ticket)
    finally:
        with _waiters_lock:
            _waiters.discard(waiter)
    if on_queued is not None:
        on_queued(0)
