"""A request body's schema (django-ninja, pydantic): what the JSON API and each kind of batch's spec schema
(`<app>/faces.py`) build on. Imported where a body is read, never on a command's start (tests/core/
test_startup_imports.py)."""

from __future__ import annotations

from typing import Any

from ninja import Schema
from ninja.schema import DjangoGetter
from pydantic import ConfigDict, model_validator


class Input(Schema):
    """A request body: a JSON object (an array or a number is refused, not read as an empty object), and a key
    the endpoint does not know is refused rather than ignored (a misspelt option is not silently dropped)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        # ninja's own validator runs around this one and hands it the value wrapped (DjangoGetter).
        raw = value._obj if isinstance(value, DjangoGetter) else value
        if not isinstance(raw, dict):
            raise ValueError("Expected a JSON object.")
        return value
