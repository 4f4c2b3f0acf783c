"""The report's two SVG charts as numbers a template draws: judge accuracy per protocol with 95% intervals
(bars), and the reliability diagram (the judge's stated probability against how often it came true).
Pure: no Django. Undefined figures draw no mark and keep their reason for the chart's text."""

from __future__ import annotations

from dataclasses import dataclass

from experiments import stats

TITLES = {
    "evidence_debate": "Debate",
    "consultancy": "Consultancy",
    "blind": "Blind",
    "oracle": "Oracle",
}


def title(name: str) -> str:
    """A protocol as the report names it ("Debate"), or a difference between two ("Debate minus Blind" with a
    minus sign)."""
    return " \u2212 ".join(TITLES.get(part, part) for part in name.split(" - "))


@dataclass(frozen=True)
class Bar:
    label: str
    x: float
    width: float
    y: float | None  # the bar's top; None when the accuracy is undefined
    height: float
    middle: float  # x of the interval's line
    low: float | None  # the interval's ends (y coordinates)
    high: float | None
    text: str  # the value, or "undefined" and why


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    top: int
    bottom: int  # y of the axis
    left: int
    bars: list[Bar]
    ticks: list[tuple[float, str]]  # (y, label)
    chance: float  # y of 50%


def _y(value: float, top: int, bottom: int) -> float:
    return round(bottom - value * (bottom - top), 1)


def accuracy_bars(report: stats.Report, width: int = 520, height: int = 260) -> BarChart:
    top, bottom, left, right = 16, height - 40, 48, width - 12
    slot = (right - left) / max(len(report.protocols), 1)
    bars = []
    for index, p in enumerate(report.protocols):
        a = p.accuracy
        x = round(left + index * slot + slot * 0.2, 1)
        if a.value is None:
            text = f"undefined ({a.why})"
        else:
            text = f"{100 * a.value:.0f}%"
            if a.low is not None and a.high is not None:
                text += f" (95% interval {100 * a.low:.0f}% to {100 * a.high:.0f}%)"
        y = _y(a.value, top, bottom) if a.value is not None else None
        bars.append(
            Bar(
                label=TITLES.get(p.protocol, p.protocol),
                x=x,
                width=round(slot * 0.6, 1),
                y=y,
                height=round(bottom - y, 1) if y is not None else 0.0,
                middle=round(x + slot * 0.3, 1),
                low=_y(a.low, top, bottom) if a.low is not None else None,
                high=_y(a.high, top, bottom) if a.high is not None else None,
                text=text,
            )
        )
    ticks = [(_y(v / 100, top, bottom), f"{v}%") for v in (0, 25, 50, 75, 100)]
    return BarChart(width, height, top, bottom, left, bars, ticks, _y(0.5, top, bottom))


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
    pad: int
    curves: list[Curve]
    ticks: list[tuple[float, str]]  # (position along either axis, label)


def reliability(report: stats.Report, size: int = 260) -> Reliability:
    pad = 36
    span = size - 2 * pad

    def at(value: float, axis: str) -> float:
        return round(pad + value * span, 1) if axis == "x" else round(size - pad - value * span, 1)

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
    ticks = [(at(v / 100, "x"), f"{v}%") for v in (0, 50, 100)]
    return Reliability(size, pad, curves, ticks)
