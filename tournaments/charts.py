"""The report's pictures as SVG-ready numbers: a forest plot of ratings with their intervals and a
head-to-head win matrix. Templates draw them (templates/partials/tournament_*.html); nothing here
is HTML, so every name reaching the page goes through the template's escaping. Sizes and text fitting are
chaoslm/charts.py's: drawn to fit a phone's panel at a readable size."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chaoslm.charts import FONT, NO_FIGURE, WIDTH, fit, text_width

ROW = 46  # a forest row: the name and its figures on a line, the interval beneath
CELL = 36  # a head-to-head cell
# How a rating difference reads (Bradley-Terry, tournaments/stats.py): expit(1) = 73%.
RATING_AXIS = "Rating (1 more: wins 73% of verdicts)"


@dataclass(frozen=True)
class ForestRow:
    name: str
    shown: str  # the name as it fits beside its figures
    text_y: float  # the baseline of the name and the figures
    y: float  # the interval's line
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
    """Each debater's rating as a dot on a line from its interval's low to high end, best first: the name and
    its figures on a line above their interval, so the plot has the chart's whole width at any name's length."""
    left, right, top = 8, WIDTH - 8, 4
    values = [v for r in ratings for v in (r.rating, r.ci_low, r.ci_high) if isinstance(v, int | float)]
    scale, lo, hi = _scale(values, left, right)
    rows = []
    for index, r in enumerate(ratings):

        def at(value: Any) -> float | None:
            return scale(value) if isinstance(value, int | float) else None

        if all(isinstance(v, int | float) for v in (r.rating, r.ci_low, r.ci_high)):
            interval = f"{r.rating:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
        else:
            interval = f"{r.rating:.2f} [no interval yet]" if isinstance(r.rating, int | float) else NO_FIGURE
        y = top + ROW * index
        shown = fit(r.name, WIDTH - text_width(interval) - FONT)
        rows.append(
            ForestRow(r.name, shown, y + FONT, y + FONT + 16, at(r.rating), at(r.ci_low), at(r.ci_high), interval)
        )
    axis_y = top + ROW * max(len(rows), 1)
    ticks = [
        {"x": scale(v), "label": f"{v:.1f}" if round(v, 1) else "0.0", "anchor": anchor}
        for v, anchor in ((lo, "start"), ((lo + hi) / 2, "middle"), (hi, "end"))
    ]
    return {
        "rows": rows,
        "width": WIDTH,
        "height": axis_y + 2 * FONT + 20,
        "left": left,
        "right": right,
        "ticks": ticks,
        "axis_y": axis_y,
        "tick_y": axis_y + FONT + 4,
        "title": RATING_AXIS,
        "title_x": WIDTH / 2,
        "title_y": axis_y + 2 * FONT + 14,
    }


def matrix(names: Sequence[str], head_to_head: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Wins of the row debater over the column debater, each cell shaded by the row's share of the pair's games.
    Rows are numbered and named; columns carry the numbers, so no name needs slanting out of the chart."""
    top = FONT + 10
    labels = [f"{i}. {name}" for i, name in enumerate(names, start=1)]
    # The names' column: as wide as the longest, within what leaves the cells a phone's width.
    left = min(max((text_width(label) for label in labels), default=0) + 10, WIDTH - CELL * max(len(names), 2) - 4)
    left = max(left, 90)
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
                    "x": left + j * CELL,
                    "y": top + i * CELL,
                    "middle_x": left + j * CELL + CELL / 2,
                    "middle_y": top + i * CELL + CELL / 2,
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
    return {
        "cells": cells,
        "rows": [
            {"name": name, "shown": fit(label, left - 8), "y": top + i * CELL + CELL / 2}
            for i, (name, label) in enumerate(zip(names, labels, strict=True))
        ],
        "columns": [{"number": i + 1, "name": name, "x": left + i * CELL + CELL / 2} for i, name in enumerate(names)],
        "size": CELL,
        "left": left,
        "top": top,
        "column_y": top - 8,
        "width": left + CELL * len(names) + 4,
        "height": top + CELL * len(names) + 4,
    }
