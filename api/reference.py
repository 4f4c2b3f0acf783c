"""The API's reference page (/api/v1/docs): every operation of the OpenAPI document, its parameters, request body and
answers, and every schema they name, written as an ordinary page of the site.

Swagger UI, which served it before, failed the bar every other page meets (axe-core found contrast failures and
buttons inside buttons that are its own markup); this page is server-rendered from the same document the schema URL
serves, so it cannot drift from it, and needs no script."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString
from ninja.openapi.docs import DocsBase

from chaoslm.rendering import markdown_to_html

if TYPE_CHECKING:
    from ninja import NinjaAPI

METHODS = ("get", "post", "put", "patch", "delete")
REF_PREFIX = "#/components/schemas/"
# Limits a schema states, as a reader reads them.
LIMITS = (
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
    ("maxProperties", "at most {} entries"),
    ("minimum", "at least {}"),
    ("maximum", "at most {}"),
)
# pydantic's bound for a positive id (a 64-bit integer): a limit no caller meets, and noise on every id.
NO_LIMIT = 9223372036854775807


def schema_anchor(name: str) -> str:
    return f"schema-{name}"


def type_html(schema: dict[str, Any]) -> SafeString:
    """A schema's type as a reader reads it: "string", "array of <a>SeatOut</a>", "integer or null"."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix(REF_PREFIX)
        return format_html('<a href="#{}">{}</a>', schema_anchor(name), name)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return SafeString(" or ".join(type_html(s) for s in schema[key]))
    kind = schema.get("type", "any")
    if kind == "array":
        return format_html("array of {}", type_html(schema.get("items", {})))
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return format_html("object of {}", type_html(schema["additionalProperties"]))
    if "enum" in schema:
        choices = format_html_join(", ", "<code>{}</code>", ((v,) for v in schema["enum"]))
        return format_html("{}: one of {}", kind, choices)
    if "format" in schema:
        return format_html("{} ({})", kind, schema["format"])
    return format_html("{}", kind)


def limits_text(schema: dict[str, Any]) -> str:
    """What a value may be beyond its type: its default and bounds ("default 1; at least 1")."""
    parts = []
    if "default" in schema:
        parts.append(f"default {json.dumps(schema['default'])}")
    for key, text in LIMITS:
        if key in schema and schema[key] != NO_LIMIT:
            parts.append(text.format(schema[key]))
    return "; ".join(parts)


@dataclass
class Row:
    """A parameter or a schema's property."""

    name: str
    where: str
    type: SafeString
    required: bool
    limits: str
    description: SafeString


@dataclass
class Answer:
    status: str
    description: SafeString
    bodies: list[tuple[str, SafeString]]
    headers: list[tuple[str, SafeString]]


@dataclass
class Operation:
    anchor: str
    method: str
    path: str
    summary: str
    description: SafeString
    parameters: list[Row]
    body: list[tuple[str, SafeString]]
    body_required: bool
    answers: list[Answer]
    open: bool  # needs no token


@dataclass
class Section:
    tag: str
    operations: list[Operation] = field(default_factory=list)


@dataclass
class Schema:
    name: str
    anchor: str
    description: SafeString
    properties: list[Row]


def _text(text: str) -> SafeString:
    """A description of paragraphs (an operation's, a schema's), from its Markdown. A docstring's lines are wrapped
    for the source, not the page: a single line break is a space (but before a list's item)."""
    return markdown_to_html(re.sub(r"(?<!\n)\n(?!\n|\s*(?:[-*] |\d+\. ))", " ", text)) if text else SafeString("")


def _line(text: str) -> SafeString:
    """A one-line description (a field's, an answer's): escaped, its `code` spans as code."""
    return SafeString(re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text)))


def _bodies(content: dict[str, Any]) -> list[tuple[str, SafeString]]:
    return [(media, type_html(body.get("schema", {}))) for media, body in content.items()]


def _operation(path: str, method: str, op: dict[str, Any]) -> Operation:
    parameters = [
        Row(
            name=p["name"],
            where=p.get("in", ""),
            type=type_html(p.get("schema", {})),
            required=bool(p.get("required")),
            limits=limits_text(p.get("schema", {})),
            description=_line(p.get("description") or p.get("schema", {}).get("description", "")),
        )
        for p in op.get("parameters", [])
    ]
    answers = [
        Answer(
            status=status,
            description=_line(answer.get("description", "")),
            bodies=_bodies(answer.get("content", {})),
            headers=[(name, _line(h.get("description", ""))) for name, h in answer.get("headers", {}).items()],
        )
        for status, answer in sorted(op.get("responses", {}).items())
    ]
    body = op.get("requestBody", {})
    return Operation(
        anchor=f"op-{op.get('operationId') or method + path}",
        method=method.upper(),
        path=path,
        summary=op.get("summary", ""),
        description=_text(op.get("description", "")),
        parameters=parameters,
        body=_bodies(body.get("content", {})),
        body_required=bool(body.get("required")),
        answers=answers,
        open=op.get("security") == [],
    )


def _schema(name: str, schema: dict[str, Any]) -> Schema:
    required = set(schema.get("required", []))
    return Schema(
        name=name,
        anchor=schema_anchor(name),
        description=_text(schema.get("description", "")),
        properties=[
            Row(
                name=key,
                where="",
                type=type_html(prop),
                required=key in required,
                limits=limits_text(prop),
                description=_line(prop.get("description", "")),
            )
            for key, prop in schema.get("properties", {}).items()
        ],
    )


def page_context(document: dict[str, Any]) -> dict[str, Any]:
    """The reference page's sections (operations by tag, in the document's order) and schemas."""
    sections: dict[str, Section] = {}
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                op = item[method]
                tag = (op.get("tags") or ["other"])[0]
                sections.setdefault(tag, Section(tag)).operations.append(_operation(path, method, op))
    schemas = [_schema(name, s) for name, s in document.get("components", {}).get("schemas", {}).items()]
    info = document.get("info", {})
    return {
        "title": info.get("title", "API"),
        "version": info.get("version", ""),
        "description": _text(info.get("description", "")),
        "sections": list(sections.values()),
        "schemas": schemas,
    }


class Reference(DocsBase):
    """ninja's docs page, as our own templates: the page (templates/api/reference.html) around the reference.

    The reference is written once a process and kept: the document is made from the code, and making it and the
    page's hundred operations takes seconds."""

    template = "api/reference.html"
    body_template = "api/reference_body.html"

    def __init__(self) -> None:
        self._bodies: dict[str, SafeString] = {}

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        url = self.get_openapi_url(api, kwargs)
        if url not in self._bodies:
            context = page_context(api.get_openapi_schema(path_params=kwargs))
            self._bodies[url] = SafeString(render_to_string(self.body_template, {**context, "schema_url": url}))
        return render(request, self.template, {"body": self._bodies[url]})
