"""The comparison's chart: each arm's accuracy (with its 95% Wilson interval, a vertical bar) against what it spends
per question, as an SVG. The x axis is the cost per question when every arm's is known and above zero, else the
calls per question (a test server, or a local model, costs nothing). Pure: no Django; every text is escaped."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from chaoslm.charts import FONT, WIDTH, fit, text_width

if TYPE_CHECKING:
    from comparisons.compare_stats import Chart, Report

HEIGHT = 260
LEFT, RIGHT, TOP, BOTTOM = 44, 16, 16, 40
X_LABELS = {"cost": "cost per question (USD)", "calls": "model calls per question"}


def measure(report: Report) -> str:
    """ "cost" when every arm with a figure has a known cost per question above zero; else "calls"."""
    costs = [a.cost.per_question.value for a in report.arms if a.questions]
    return "cost" if costs and all(c is not None and c > 0 for c in costs) else "calls"


def _number(value: float, x: str) -> str:
    return f"${value:.4f}" if x == "cost" else f"{value:.1f}"


# A label's line: two labels whose baselines are closer than this, and whose spans cross, overlap.
LINE = FONT + 2


def _label(arm: str, cx: float, cy: float, width: float, placed: list[tuple[float, float, float]]) -> str:
    """An arm's name beside its point: to its right, or to its left when it would pass the chart's right edge (the
    dearest arm's point is near it), fitted to the room on that side; above its point, or, where an arm drawn
    before holds that place (arms of one accuracy at near spends), the nearest free line below or above it.
    `placed` holds the labels drawn so far (left, right, baseline) and gets this one."""
    right = width - (cx + 6)
    if text_width(arm) <= right or right >= cx - 6:
        name = fit(arm, right)
        left, end, anchor = cx + 6, cx + 6 + text_width(name), ""
    else:
        name = fit(arm, cx - 6)
        left, end, anchor = cx - 6 - text_width(name), cx - 6, ' text-anchor="end"'
    above, below = cy - 6, cy + FONT + 4
    lines = [y for step in range(4) for y in (above - step * LINE, below + step * LINE)]
    # Inside the chart: a baseline at three quarters of the font's size from its top keeps the letters in it.
    lines = [y for y in lines if FONT * 0.75 <= y <= HEIGHT - BOTTOM - 2] or [above]

    def free(y: float) -> bool:
        return all(abs(y - other_y) >= LINE or end <= a or left >= b for a, b, other_y in placed)

    y = next((y for y in lines if free(y)), lines[0])
    placed.append((left, end, y))
    return f'<text x="{left if not anchor else end}" y="{y}"{anchor}>{escape(name)}</text>'


def svg(report: Report) -> str:
    """The chart as an SVG element; an arm with no point is named below it with why."""
    from comparisons.compare_stats import accuracy_against_spend

    x = measure(report)
    chart: Chart = accuracy_against_spend(report, x)
    width, plot_w, plot_h = WIDTH, WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    top_x = max((p.x for p in chart.points), default=1.0) or 1.0
    top_x *= 1.1

    def at_x(value: float) -> float:
        return round(LEFT + value / top_x * plot_w, 1)

    def at_y(value: float) -> float:
        return round(TOP + (1 - value) * plot_h, 1)

    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {width} {HEIGHT}" width="{width}" height="{HEIGHT}" '
        f'font-size="{FONT}" aria-label="Accuracy against {escape(X_LABELS[x])}, per arm">',
        f"<title>Accuracy (95% Wilson interval) against {escape(X_LABELS[x])}</title>",
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" stroke="currentColor"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="currentColor"/>',
    ]
    for tick in (0.0, 0.5, 1.0):
        y = at_y(tick)
        parts.append(f'<text x="{LEFT - 4}" y="{y + 4}" text-anchor="end">{100 * tick:.0f}%</text>')
    parts.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 8}" text-anchor="middle">{escape(X_LABELS[x])}</text>')
    placed: list[tuple[float, float, float]] = []
    for point in chart.points:
        cx = at_x(point.x)
        label = f"{point.arm}: {100 * point.accuracy:.0f}% ({100 * point.low:.0f}\u2013{100 * point.high:.0f}%), "
        label += f"{_number(point.x, x)} per question"
        parts += [
            f'<g class="arm"><title>{escape(label)}</title>',
            f'<line x1="{cx}" y1="{at_y(point.high)}" x2="{cx}" y2="{at_y(point.low)}" stroke="currentColor"/>',
            f'<circle cx="{cx}" cy="{at_y(point.accuracy)}" r="4"/>',
            _label(point.arm, cx, at_y(point.accuracy), width, placed),
            "</g>",
        ]
    parts.append("</svg>")
    missing = "".join(f"<li>{escape(arm)}: {escape(why)}</li>" for arm, why in chart.left_out.items())
    return "".join(parts) + (f'<ul class="left-out">{missing}</ul>' if missing else "")
