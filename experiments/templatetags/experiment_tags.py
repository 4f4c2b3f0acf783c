from typing import Any

from django import template

from experiments.charts import title

register = template.Library()


@register.filter
def protocol_title(name: str) -> str:
    return title(name)


@register.filter
def percent(value: Any) -> str:
    """A share as a whole percentage (signed when negative: a difference), or "undefined"."""
    return f"{100 * value:.0f}%" if isinstance(value, int | float) else "undefined"
