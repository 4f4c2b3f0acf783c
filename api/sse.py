"""One Server-Sent Event as text. Apart from api/events.py (the streams' endpoints, with django-ninja) so that
api/batch_events.py, which the app's ready() imports for its signals, does not bring ninja into every command."""

from __future__ import annotations

import json
from typing import Any


def sse(kind: str, data: dict[str, Any], event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
