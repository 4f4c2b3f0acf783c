from django import template
from django.utils.safestring import SafeString

from chaoslm.rendering import markdown_to_html

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return markdown_to_html(text)


@register.filter
def spaced(name: str) -> str:
    """A protocol step's name for people: think_opening -> think opening."""
    return (name or "").replace("_", " ")
