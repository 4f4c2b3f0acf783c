import re

from django import template
from django.utils.safestring import SafeString

from chaoslm.rendering import markdown_to_html
from debates.event_cards import quoted_html
from debates.formats.card import decide

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    return markdown_to_html(text)


@register.filter
def answer_text(value: object) -> str:
    """An answer as pages show it: 14 for 14.0, a list joined with commas (escaped by the template)."""
    return decide.shown(value)


@register.filter
def rule_words(rule: str) -> str:
    """A decision rule's name for people: plurality -> plurality vote."""
    return decide.RULE_WORDS.get(rule, rule)


@register.filter
def spaced(name: str) -> str:
    """A protocol step's name for people: think_opening -> think opening."""
    return (name or "").replace("_", " ")


@register.filter
def with_quotes(text: str, passage: str) -> SafeString:
    """An evidence speech's Markdown with its quotes marked verified or unverified (event_cards.quoted_html)."""
    return quoted_html(text, passage or "")


_PARAGRAPHS = re.compile(r"\n\s*\n")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")


@register.filter
def reflow(text: str) -> list[str]:
    """A prompt's paragraphs as a person reads them: the YAML's hard line breaks inside a paragraph become
    spaces (a list item keeps its own line). Only the preview reflows; the model gets the text as it is."""
    paragraphs = []
    for block in _PARAGRAPHS.split((text or "").strip()):
        lines: list[str] = []
        for line in block.splitlines():
            if lines and not _LIST_ITEM.match(line):
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(line.strip())
        paragraphs.append("\n".join(lines))
    return paragraphs
