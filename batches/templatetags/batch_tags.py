from typing import Any

from django import template

from chaoslm import costs
from chaoslm.charts import NO_FIGURE

register = template.Library()


@register.filter
def stated(value: Any, kind: str = "") -> str:
    """A batch report's figure for reading, on its page, from its command and in its CSV: a number (a percentage
    when `kind` is "percent"), or "—" and the plain reason there is none ("— (one judge: panel figures compare two
    or more)"). A number can come with a reason too, said after it ("0.00 (no interval: ...)")."""
    number = getattr(value, "value", value)
    why = getattr(value, "why", "")
    if number is None:
        return f"{NO_FIGURE} ({why})" if why else NO_FIGURE
    shown = f"{100 * number:.0f}%" if kind == "percent" else f"{number:.2f}"
    return f"{shown} ({why})" if why else shown


@register.filter
def number(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else NO_FIGURE


@register.filter
def interval(rating: Any, joiner: str = " \u2013 ") -> str:
    """A rating's 95% interval for reading (a `batches.stats.Rating`): its ends joined by `joiner` (an en dash);
    "—" with no rating; "needs more verdicts" when there is a rating but no interval yet (`why` says why)."""
    low, high = rating.ci_low, rating.ci_high
    if isinstance(low, int | float) and isinstance(high, int | float):
        return f"{low:.2f}{joiner}{high:.2f}"
    return NO_FIGURE if rating.rating is None else "needs more verdicts"


@register.filter
def percent(value: Any) -> str:
    return f"{100 * value:.0f}%" if isinstance(value, int | float) else NO_FIGURE


@register.simple_tag
def budget_pause(batch: Any) -> str:
    """Why a paused batch cannot go on, if its owner's monthly budget is spent (a query only while it is paused)."""
    if batch.status != "paused" or not batch.owner_id:
        return ""
    found = costs.allowance(batch.owner)
    if not found.reached or found.budget is None:
        return ""
    return (
        f"Paused: the owner's monthly budget of {costs.money(found.budget)} is spent ({found.spent.text()} this "
        "month). Nothing is lost: resume it once an admin raises the budget or the month turns."
    )
