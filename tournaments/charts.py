"""The report's pictures as SVG-ready numbers: a forest plot of ratings with their intervals and a
head-to-head win matrix. Templates draw them (templates/partials/tournament_*.html); nothing here
is HTML, so every name reaching the page goes through the template's escaping."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ForestRow:
    name: str
    y: float
    x: float | None
    low: float | None
    high: float | None
    label: str


def _scale(values: Sequence[float], start: float, end: float) -> Any:
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad

    def scale(value: float) -> float:
        return round(start + (end - start) * (value - lo) / (hi - lo), 1)

    return scale, lo, hi


def forest(ratings: Sequence[Any]) -> dict[str, Any]:
    """Each debater's rating as a dot on a line from its interval's low to high end, best first."""
    left, right, row_height, top = 150, 470, 26, 20
    values = [v for r in ratings for v in (r.rating, r.ci_low, r.ci_high) if isinstance(v, int | float)]
    scale, lo, hi = _scale(values, left, right)
    rows = []
    for index, r in enumerate(ratings):

        def at(value: Any) -> float | None:
            return scale(value) if isinstance(value, int | float) else None

        interval = (
            f"{r.rating:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
            if all(isinstance(v, int | float) for v in (r.rating, r.ci_low, r.ci_high))
            else "undefined"
        )
        rows.append(ForestRow(r.name, top + row_height * index, at(r.rating), at(r.ci_low), at(r.ci_high), interval))
    height = top + row_height * max(len(rows), 1) + 24
    ticks = [{"x": scale(v), "label": f"{v:.1f}"} for v in (lo, (lo + hi) / 2, hi)]
    return {
        "rows": rows,
        "width": right + 110,
        "height": height,
        "left": left,
        "right": right,
        "ticks": ticks,
        "axis_y": height - 18,
    }


def matrix(names: Sequence[str], head_to_head: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Wins of the row debater over the column debater, each cell shaded by the row's share of the pair's games."""
    size, left, top = 34, 150, 110
    cells = []
    for i, row in enumerate(names):
        for j, col in enumerate(names):
            if i == j:
                continue
            wins = head_to_head.get(row, {}).get(col, 0)
            losses = head_to_head.get(col, {}).get(row, 0)
            games = wins + losses
            share = wins / games if games else None
            cells.append(
                {
                    "x": left + j * size,
                    "y": top + i * size,
                    "wins": wins,
                    "games": games,
                    "row": row,
                    "col": col,
                    # Blue for a winning record, red for a losing one; grey when they never met.
                    "fill": "#eaecf0"
                    if share is None
                    else f"hsl({210 if share >= 0.5 else 0}, 70%, {round(95 - 45 * abs(share - 0.5) * 2)}%)",
                }
            )
    labels = [{"name": n, "x": left + i * size + size / 2, "y": top + i * size + size / 2} for i, n in enumerate(names)]
    return {
        "cells": cells,
        "labels": labels,
        "size": size,
        "left": left,
        "top": top,
        "width": left + size * len(names) + 110,  # room for the last column's slanted name
        "height": top + size * len(names) + 10,
    }
