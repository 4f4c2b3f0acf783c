"""What every report chart (tournaments/charts.py, experiments/charts.py) is drawn to: a width that fits a 390-px
phone's panel without shrinking, a type size that stays readable there, and text fitted to its room.

The charts are SVG scaled to their box (max-width: 100%); a phone's panel has about 330 px, so a chart drawn
WIDTH user units wide shows its FONT-unit text at FONT * 330 / WIDTH px (12.6 px), and at its own size on a
desktop. Text widths are estimated, not measured (the server has no font): CHAR em a character is more than the
average of the sans-serif faces a browser picks, so text fitted by these numbers stays inside its room.
"""

from __future__ import annotations

WIDTH = 340  # user units: a chart's width
FONT = 13  # user units: every chart's text (static/css/chaoslm.css draws it at this size)
CHAR = 0.62  # em: an upper estimate of a character's width
# What a report figure that cannot be computed reads as, on pages, in charts, commands and CSV, its reason after
# it where there is room: "undefined" read as a bug in the report.
NO_FIGURE = "\u2014"


def text_width(text: str, size: float = FONT) -> float:
    return len(text) * size * CHAR


def fit(text: str, room: float, size: float = FONT) -> str:
    """`text`, cut with an ellipsis so it fits `room` user units (the whole text stays in the chart's <title>)."""
    if text_width(text, size) <= room:
        return text
    keep = max(int(room / (size * CHAR)) - 1, 1)
    return text[:keep].rstrip() + "\u2026"
