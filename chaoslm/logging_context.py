"""Log lines that name what they are about: a debate, a room or a batch, and its owner.

The work binds what it runs on (`bound(debate=12, owner="olive")`): the engine for a debate's run, a room's round
or auto loop, a batch's pass, the inline runner for any run. The binding is a context variable, so every line
logged inside, by ChaosLM or the libraries it calls (the gateway's retries, a task's failure), carries it, and the
tasks the work starts inherit it. `ContextFilter` puts it on each record of the console handler; the formatter is
plain text (`... [debate=12 owner=olive]`) or, with `CHAOSLM_LOG_FORMAT=json`, one JSON object a line.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

_fields: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("chaoslm_log_fields", default={})  # noqa: B039 (never mutated)


@contextlib.contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """Name `fields` (those not None) on every log line inside the block, besides what is bound already."""
    token = _fields.set({**_fields.get(), **{k: str(v) for k, v in fields.items() if v is not None}})
    try:
        yield
    finally:
        _fields.reset(token)


def current() -> dict[str, str]:
    return _fields.get()


class ContextFilter(logging.Filter):
    """Adds the bound fields to each record: `record.context` (a dict) and `record.context_text` (` [k=v ...]`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = _fields.get()
        record.context = fields
        record.context_text = f" [{' '.join(f'{k}={v}' for k, v in fields.items())}]" if fields else ""
        return True


class TextFormatter(logging.Formatter):
    """The readable default: the message, then what it is about in brackets."""

    def __init__(self) -> None:
        super().__init__("%(message)s%(context_text)s")

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "context_text"):  # a record that came by another handler's path
            ContextFilter().filter(record)
        return super().format(record)


class JsonFormatter(logging.Formatter):
    """One JSON object a line, for log collectors: time, level, logger, message, the bound fields, a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(getattr(record, "context", None) or _fields.get())
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)
