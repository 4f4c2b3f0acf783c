from typing import Any

from django import template

from chaoslm.charts import NO_FIGURE
from experiments.charts import title

register = template.Library()


@register.filter
def protocol_title(name: str) -> str:
    return title(name)


@register.filter
def percent(value: Any) -> str:
    """A share as a whole percentage (signed when negative: a difference), or "—"."""
    return f"{100 * value:.0f}%" if isinstance(value, int | float) else NO_FIGURE
