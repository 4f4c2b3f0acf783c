"""What /metrics reads when it is scraped (chaoslm/metrics.py): gauges an app computes from its rows, registered in
its `AppConfig.ready()`. Kept apart from chaoslm/metrics.py so that registering one does not import
prometheus_client into every command."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass
class GaugeReading:
    """One gauge's series as read now: each row is (label values, value)."""

    name: str
    help: str
    labels: list[str]
    rows: list[tuple[list[str], float]] = field(default_factory=list)


Source = Callable[[], Iterable[GaugeReading]]
sources: list[Source] = []


def register(source: Source) -> None:
    """A function giving gauge readings at each scrape (an app's rows by status, say)."""
    if source not in sources:
        sources.append(source)
