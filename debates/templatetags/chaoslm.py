from django import template
from django.utils.safestring import SafeString

from chaoslm.rendering import markdown_to_html
from debates.cards import quoted_html

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return markdown_to_html(text)


@register.filter
def spaced(name: str) -> str:
    """A protocol step's name for people: think_opening -> think opening."""
    return (name or "").replace("_", " ")


@register.filter
def with_quotes(text: str, passage: str) -> SafeString:
    """An evidence speech's Markdown with its quotes marked verified or unverified (cards.quoted_html)."""
    return quoted_html(text, passage or "")
