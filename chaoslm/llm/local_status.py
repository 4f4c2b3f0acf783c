"""What `serve`'s supervisor says about the embedded model, for every process on this machine that calls it
(the web server, the debate command, Celery workers): a small JSON file per port.

No Django here: the gateway reads it on a failed call, and the gateway loads without Django (the pure
formats import its message helpers).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

UP, RESTARTING, DOWN = "up", "restarting", "down"


def status_path(port: int) -> Path:
    return Path(tempfile.gettempdir()) / f"chaoslm-local-model-{port}.status.json"


@dataclass(frozen=True)
class Trouble:
    """The supervised embedded model is not answering: why, in words a user can act on."""

    restarting: bool
    message: str


def write(host: str, port: int, state: str, detail: str, log: Path) -> None:
    path = status_path(port)
    partial = path.with_suffix(".tmp")
    record = {"state": state, "detail": detail, "host": host, "log": str(log), "supervisor": os.getpid()}
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


def trouble_at(url: str) -> Trouble | None:
    """Why the embedded model serving `url` is not answering, if a supervisor on this machine says so; else None."""
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
    detail = state.get("detail", "")
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
