"""The report's two SVG charts as numbers a template draws: judge accuracy per protocol with 95% intervals
(bars), and the reliability diagram (the judge's stated probability against how often it came true).
Pure: no Django. Undefined figures draw no mark and keep their reason for the chart's text. Sizes are
chaoslm/charts.py's: drawn to fit a phone's panel at a readable size."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chaoslm.charts import FONT, NO_FIGURE, WIDTH
from experiments.design import BLIND, CONSULTANCY, DEBATE, ORACLE

if TYPE_CHECKING:
    from experiments import stats

TITLES = {DEBATE: "Debate", CONSULTANCY: "Consultancy", BLIND: "Blind", ORACLE: "Oracle"}


def title(name: str) -> str:
    """A protocol as the report names it ("Debate"), or a difference between two ("Debate minus Blind" with a
    minus sign)."""
    return " \u2212 ".join(TITLES.get(part, part) for part in name.split(" - "))


@dataclass(frozen=True)
class Bar:
    label: str
    text: str  # the value and its interval, or "—"
    why: str  # the whole figure in words, for the bar's <title>
    text_y: float  # the baseline of the label and the text
    y: float  # the bar's top
    width: float  # 0 when the accuracy is undefined
    low: float | None  # the interval's ends (x coordinates)
    high: float | None


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    left: float  # x of 0%
    right: float  # x of 100%
    bottom: float  # y under the last bar
    bar: int  # a bar's thickness
    bars: list[Bar]
    ticks: list[tuple[float, str, str]]  # (x, label, text-anchor)
    tick_y: float
    chance: float  # x of 50%
    title: str
    title_y: float


BAR_ROW = 48  # a protocol: its name and figures on a line, its bar beneath


def _percent(value: float) -> str:
    return f"{100 * value:.0f}%"


def accuracy_bars(report: stats.Report) -> BarChart:
    """One horizontal bar a protocol, 0 to 100% across the chart's width, its 95% interval drawn over it: the
    names and figures on their own lines, so they never meet however many protocols there are."""
    left, right, bar = 8, WIDTH - 8, 16

    def at(value: float) -> float:
        return round(left + value * (right - left), 1)

    bars = []
    for index, p in enumerate(report.protocols):
        a = p.accuracy
        top = BAR_ROW * index
        if a.value is None:
            text, why = NO_FIGURE, f"{NO_FIGURE} ({a.why})"
        else:
            text = _percent(a.value)
            if a.low is not None and a.high is not None:
                text += f" (interval {_percent(a.low)}\u2013{_percent(a.high)})"
            why = text
        bars.append(
            Bar(
                label=TITLES.get(p.protocol, p.protocol),
                text=text,
                why=why,
                text_y=top + FONT,
                y=top + FONT + 6,
                width=round(at(a.value) - left, 1) if a.value is not None else 0.0,
                low=at(a.low) if a.low is not None else None,
                high=at(a.high) if a.high is not None else None,
            )
        )
    bottom = BAR_ROW * max(len(bars), 1)
    ticks = [(at(v / 100), f"{v}%", anchor) for v, anchor in ((0, "start"), (50, "middle"), (100, "end"))]
    return BarChart(
        width=WIDTH,
        height=bottom + 2 * FONT + 22,
        left=left,
        right=right,
        bottom=bottom,
        bar=bar,
        bars=bars,
        ticks=ticks,
        tick_y=bottom + FONT + 4,
        chance=at(0.5),
        title="Accuracy (dashed: 50%, a coin toss)",
        title_y=bottom + 2 * FONT + 16,
    )


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    count: int
    text: str


@dataclass(frozen=True)
class Curve:
    label: str
    css: str  # the series' class, for its colour in chaoslm.css
    points: list[Point]
    path: str  # the polyline's points attribute


@dataclass(frozen=True)
class Reliability:
    size: int
    left: int  # x of 0 on the forecast axis
    right: int
    top: int
    bottom: int  # y of 0 on the observed axis
    curves: list[Curve]
    x_ticks: list[tuple[float, str, str]]  # (x, label, text-anchor)
    y_ticks: list[tuple[float, str]]  # (y, label)
    x_title: str
    y_title: str


def reliability(report: stats.Report) -> Reliability:
    """The reliability diagram, square, as wide as the other charts, both axes ticked and named."""
    size = WIDTH
    left, right, top, bottom = 62, size - 10, 10, size - 2 * FONT - 22

    def at(value: float, axis: str) -> float:
        return round(left + value * (right - left), 1) if axis == "x" else round(bottom - value * (bottom - top), 1)

    curves = []
    for index, p in enumerate(report.protocols):
        points = [
            Point(
                at(b.forecast, "x"),
                at(b.observed, "y"),
                b.count,
                f"{TITLES.get(p.protocol, p.protocol)}: said {100 * b.forecast:.0f}% for A, "
                f"A was right {100 * b.observed:.0f}% of {b.count}",
            )
            for b in p.reliability
            if b.count and b.forecast is not None and b.observed is not None
        ]
        curves.append(
            Curve(
                label=TITLES.get(p.protocol, p.protocol),
                css=f"series-{index}",
                points=points,
                path=" ".join(f"{pt.x},{pt.y}" for pt in points),
            )
        )
    steps = (0, 25, 50, 75, 100)
    return Reliability(
        size=size,
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        curves=curves,
        x_ticks=[(at(v / 100, "x"), f"{v}%", {0: "start", 100: "end"}.get(v, "middle")) for v in steps],
        y_ticks=[(at(v / 100, "y"), f"{v}%") for v in steps],
        x_title="The judge's probability for A",
        y_title="How often A was correct",
    )
