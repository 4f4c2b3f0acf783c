from typing import Any

from django import template

from experiments.charts import TITLES

register = template.Library()


@register.filter
def protocol_title(name: str) -> str:
    """A protocol as the report names it ("Debate"), or a difference between two ("Debate minus Blind" with a
    minus sign)."""
    return " \u2212 ".join(TITLES.get(part, part) for part in name.split(" - "))


@register.filter
def percent(value: Any) -> str:
    """A share as a whole percentage (signed when negative: a difference), or "undefined"."""
    return f"{100 * value:.0f}%" if isinstance(value, int | float) else "undefined"
