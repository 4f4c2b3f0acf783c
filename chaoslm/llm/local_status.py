"""What `serve`'s supervisor says about the embedded model, for every process on this machine that calls it
(the web server, the debate command, Celery workers): a small JSON file per port.

No Django here: the gateway reads it on a failed call, and the gateway loads without Django (the pure
formats import its message helpers).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

STARTING, UP, RESTARTING, DOWN = "starting", "up", "restarting", "down"


def status_path(port: int) -> Path:
    return Path(tempfile.gettempdir()) / f"chaoslm-local-model-{port}.status.json"


@dataclass(frozen=True)
class Trouble:
    """The supervised embedded model is not answering: why, in words a user can act on."""

    restarting: bool
    message: str
    # Its first start, which `serve` does while it already serves pages: a wait, not a fault. How long it has
    # taken so far and took last time, in seconds, where known.
    starting: bool = False
    elapsed: int | None = None
    expected: int | None = None


def last_start_path(port: int) -> Path:
    return Path(tempfile.gettempdir()) / f"chaoslm-local-model-{port}.last-start"


def last_start(port: int) -> float | None:
    """How many seconds the model's last start on this machine took to its first answer, if known."""
    try:
        return float(last_start_path(port).read_text())
    except (OSError, ValueError):
        return None


def record_start(port: int, seconds: float) -> None:
    last_start_path(port).write_text(f"{seconds:.1f}")


def write(
    host: str,
    port: int,
    state: str,
    detail: str,
    log: Path,
    model: dict[str, Any] | None = None,
    since: float | None = None,
    speed: dict[str, float | None] | None = None,
) -> None:
    """The supervisor's word on the model at `port`; `model` names the server process it runs (pid, start), `since`
    when (epoch seconds) the state began, where a reader tells how long it has lasted, `speed` how fast it read and
    wrote on this machine when it started (`Speed`)."""
    path = status_path(port)
    partial = path.with_suffix(".tmp")
    record = {"state": state, "detail": detail, "host": host, "log": str(log), "supervisor": os.getpid()}
    if model is not None:
        record["model"] = model
    if since is not None:
        record["since"] = since
    if speed is not None:
        record["speed"] = speed
    partial.write_text(json.dumps(record))
    partial.replace(path)  # atomic: a reader never sees half a file


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _record_at(url: str) -> dict[str, Any] | None:
    """The live supervisor's record for the embedded model serving `url`, if there is one on this machine."""
    parts = urlsplit(url)
    if parts.port is None:
        return None
    try:
        state = json.loads(status_path(parts.port).read_text())
    except (OSError, ValueError):
        return None
    # Another server on the same port elsewhere is not ours; a status left by a killed `serve` says nothing.
    if not isinstance(state, dict) or state.get("host") != parts.hostname:
        return None
    if not _pid_alive(int(state.get("supervisor", 0))):
        return None
    return state


@dataclass(frozen=True)
class Speed:
    """How fast the embedded model read a prompt and wrote a reply on this machine, in tokens a second, measured by
    its supervisor once it answered (`local_model.measure_speed`). `prompt_per_second` is None when the server
    did not time the two apart: `write_per_second` is then the whole call's, its prompt included."""

    prompt_per_second: float | None
    write_per_second: float


def speed_at(url: str) -> Speed | None:
    """The speed the live supervisor of the embedded model serving `url` measured, if it did."""
    state = _record_at(url)
    speed = state.get("speed") if state is not None else None
    if not isinstance(speed, dict):
        return None
    prompt, write = speed.get("prompt_per_second"), speed.get("write_per_second")
    if not isinstance(write, int | float) or write <= 0:
        return None
    return Speed(float(prompt) if isinstance(prompt, int | float) and prompt > 0 else None, float(write))


def trouble_at(url: str) -> Trouble | None:
    """Why the embedded model serving `url` is not answering, if a supervisor on this machine says so; else None."""
    state = _record_at(url)
    if state is None:
        return None
    detail = state.get("detail", "")
    if state.get("state") == STARTING:
        return _starting(detail, state, urlsplit(url).port or 0)
    if state.get("state") == RESTARTING:
        return Trouble(
            restarting=True,
            message=f"The embedded model is restarting ({detail}). ChaosLM restarts it by itself; "
            "this takes a few seconds.",
        )
    if state.get("state") == DOWN:
        return Trouble(
            restarting=False,
            message=f"The embedded model is down ({detail}). Restart ChaosLM (make run), or set "
            f"OPENAI_BASE_URL to use another endpoint. Its log: {state.get('log', '')}.",
        )
    return None


def _starting(detail: str, state: dict[str, Any], port: int) -> Trouble:
    since = state.get("since")
    elapsed = int(max(0.0, time.time() - since)) if isinstance(since, (int, float)) else None
    last = last_start(port)
    expected = round(last) if last is not None else None
    so_far = f", {elapsed} s so far" if elapsed is not None else ""
    usual = f"; it took {expected} s last time" if expected is not None else ""
    message = (
        f"The embedded model is starting ({detail}{so_far}{usual}). Everything else works meanwhile; a debate "
        "started now waits for it."
    )
    return Trouble(restarting=True, message=message, starting=True, elapsed=elapsed, expected=expected)
