"""Live events for scripts: Server-Sent Events."""

from __future__ import annotations

from ninja import Router

router = Router()
