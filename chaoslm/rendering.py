"""Model and user text to safe HTML: Markdown rendered by markdown-it-py, then sanitized by nh3 (Ammonia).

Raw HTML in the Markdown is not rendered at all, and the sanitizer removes anything that could run
script (event handlers, javascript: links, unknown tags), whatever the Markdown produced.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import nh3
from django.utils.safestring import SafeString, mark_safe

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@functools.cache
def _markdown() -> MarkdownIt:
    # Built at the first text rendered, not when the models load: markdown-it slows every command's start.
    from markdown_it import MarkdownIt

    return (
        MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True})
        .enable("table")
        .enable("strikethrough")
    )


ALLOWED_TAGS = {
    "p", "br", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def markdown_to_html(text: str) -> SafeString:
    html = _markdown().render(text or "")
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes={"a": {"href", "title"}, "th": {"align"}, "td": {"align"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # noqa: S308 - sanitized by nh3 just above
