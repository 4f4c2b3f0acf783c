from typing import Any

from django import template

register = template.Library()


@register.filter
def figure(value: Any, kind: str = "") -> str:
    """A report figure for reading: a number (a percentage when `kind` is "percent"), or "undefined" and why.

    A number can come with a reason too, when only part of it is undefined (a kappa of 0 whose interval is not):
    it is said after the number."""
    number = getattr(value, "value", value)
    why = getattr(value, "why", "")
    if number is None:
        return f"undefined ({why})" if why else "undefined"
    shown = f"{100 * number:.0f}%" if kind == "percent" else f"{number:.2f}"
    return f"{shown} ({why})" if why else shown


@register.filter
def number(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "undefined"


@register.filter
def percent(value: Any) -> str:
    return f"{100 * value:.0f}%" if isinstance(value, int | float) else "undefined"
