"""A card's prompt templates: text with named placeholders, nothing else (docs/cards.md, "Templates").

`{name}` is replaced by a value from a closed list the card language defines; `{if name}...{end}` keeps its text
only when `name` has a non-empty value; `{{` and `}}` are literal braces. There is no attribute or index access,
no expression, no filter: a template cannot run anything, and every name it uses is known when the card is parsed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

NAME = r"[a-z][a-z0-9_]*"
_TOKEN = re.compile(r"\{\{|\}\}|\{if (" + NAME + r")\}|\{end\}|\{(" + NAME + r")\}|\{|\}")


class TemplateError(ValueError):
    """A template that is not well formed; the message says what to write instead."""


@dataclass(frozen=True)
class Template:
    """A parsed template: literal text and placeholders, with optional sections."""

    source: str
    # Literal strings, ("var", name) and ("if", name, parts) entries, in order.
    parts: tuple[object, ...]
    names: frozenset[str]

    def render(self, values: Mapping[str, str]) -> str:
        return _render(self.parts, values)

    def __bool__(self) -> bool:
        return bool(self.source)


def _render(parts: tuple[object, ...], values: Mapping[str, str]) -> str:
    # Every step renders its prompt and status with this: bound methods as locals keep it lean.
    out: list[str] = []
    append, get = out.append, values.get
    for part in parts:
        if isinstance(part, str):
            append(part)  # type: ignore[arg-type]
        elif part[0] == "var":  # type: ignore[index]
            append(get(part[1], ""))  # type: ignore[index]
        elif get(part[1]):  # type: ignore[index]
            append(_render(part[2], values))  # type: ignore[index]
    return "".join(out)


def parse_template(source: str) -> Template:
    """Parse `source`; raise TemplateError naming the first thing that is not text, a placeholder or a section."""
    top: list[object] = []
    current = top
    section: tuple[str, list[object]] | None = None
    names: set[str] = set()
    position = 0
    for match in _TOKEN.finditer(source):
        if match.start() > position:
            current.append(source[position : match.start()])
        position = match.end()
        lexeme = match.group(0)
        if lexeme in ("{{", "}}"):
            current.append(lexeme[0])
        elif match.group(1):
            if section is not None:
                raise TemplateError(f"{{if {match.group(1)}}} starts inside another {{if}} section; close it first.")
            section = (match.group(1), [])
            names.add(match.group(1))
            current = section[1]
        elif lexeme == "{end}":
            if section is None:
                raise TemplateError("{end} closes no {if ...} section.")
            top.append(("if", section[0], tuple(section[1])))
            section, current = None, top
        elif match.group(2):
            names.add(match.group(2))
            current.append(("var", match.group(2)))
        else:
            # The brace and what follows it up to its closing brace (`{topic.upper}`), if that is near.
            close = source.find("}", match.start(), match.start() + 40)
            snippet = source[match.start() : close + 1 if close >= 0 else match.start() + 20].split("\n")[0]
            raise TemplateError(
                f"{snippet!r} is not a placeholder: write a name in braces such as {{topic}} (lower case letters, "
                "digits and _ only), and {{ or }} for a literal brace."
            )
    if section is not None:
        raise TemplateError(f"{{if {section[0]}}} has no {{end}}.")
    if position < len(source):
        current.append(source[position:])
    return Template(source=source, parts=tuple(_merge(top)), names=frozenset(names))


def _merge(parts: list[object]) -> list[object]:
    """Join adjacent literals, so rendering appends one string per run of text."""
    merged: list[object] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return merged


EMPTY = parse_template("")
