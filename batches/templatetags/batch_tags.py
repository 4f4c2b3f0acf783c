from typing import Any

from django import template

register = template.Library()


@register.filter
def figure(value: Any, kind: str = "") -> str:
    """A report figure for reading: a number (a percentage when `kind` is "percent"), or "undefined" and why."""
    number = getattr(value, "value", value)
    if number is None:
        why = getattr(value, "why", "")
        return f"undefined ({why})" if why else "undefined"
    if kind == "percent":
        return f"{100 * number:.0f}%"
    return f"{number:.2f}"


@register.filter
def number(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "undefined"
