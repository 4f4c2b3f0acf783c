"""A card's YAML read with the line of every mapping and key, and the fields of one mapping read from it, each
problem noted with its line and field path (docs/cards.md, "Checks and caps"). spec.py reads a whole card with
these."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from debates.formats.card.template import EMPTY, Template, TemplateError, parse_template

MAX_TEXT = 200_000  # characters of YAML
MAX_TEMPLATE = 20_000  # characters of one template
KEY = re.compile(r"[a-z][a-z0-9_]{0,39}")

if TYPE_CHECKING:
    import yaml


class CardProblem(NamedTuple):
    line: int  # 1-based line in the YAML text (0: the card as a whole)
    field: str
    message: str


class Problems:
    def __init__(self) -> None:
        self.items: list[CardProblem] = []
        # Templates whose placeholders are checked once every step name is known: (template, context, in a
        # repeat, line, field).
        # Each template with where it stands: (template, context, in_repeat, line, field, in an answering speech).
        self.templates: list[tuple[Template, str, bool, int, str, bool]] = []

    def add(self, line: int, field: str, message: str) -> None:
        self.items.append(CardProblem(line, field, message))


# -- YAML with line numbers --------------------------------------------------------------------------------------
class LMap(dict):
    """A YAML mapping that remembers the line of itself and of each key."""

    line: int = 0
    lines: dict[str, int]


class LList(list):
    line: int = 0
    lines: list[int]


ALIASES = "Anchors and aliases (& and *) are not allowed in a card; write the text out."


def load_yaml(text: str, problems: Problems) -> Any:
    # PyYAML loads with the first card read, not with this module: formats/__init__ imports the card language,
    # and every command's start stays free of it (tests/core/test_startup_imports.py).
    import yaml

    if len(text) > MAX_TEXT:
        problems.add(1, "", f"A card may be at most {MAX_TEXT:,} characters; this one is {len(text):,}.")
        return None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        what = getattr(error, "problem", None) or str(error).splitlines()[0]
        problems.add(line, "", f"The YAML cannot be read: {what}.")
        return None
    if node is None:
        problems.add(1, "", "The card is empty.")
        return None
    return _convert(node, problems, "", set(), yaml.constructor.SafeConstructor())


def _convert(node: yaml.Node, problems: Problems, path: str, seen: set[int], constructor: Any) -> Any:
    import yaml  # loaded by load_yaml already

    line = node.start_mark.line + 1
    if id(node) in seen:
        problems.add(line, path, ALIASES)
        return None
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        result = LMap()
        result.line, result.lines = line, {}
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                problems.add(key_line, path, "A key must be a plain name.")
                continue
            key = str(key_node.value)
            sub = f"{path}.{key}" if path else key
            if key in result.lines:
                problems.add(key_line, sub, f"{key!r} is given twice (first on line {result.lines[key]}).")
                continue
            result.lines[key] = key_line
            if id(value_node) in seen:
                problems.add(key_line, sub, ALIASES)
                continue
            result[key] = _convert(value_node, problems, sub, seen, constructor)
        return result
    if isinstance(node, yaml.SequenceNode):
        items = LList()
        items.line, items.lines = line, []
        for index, item in enumerate(node.value):
            items.lines.append(item.start_mark.line + 1)
            items.append(_convert(item, problems, f"{path}[{index + 1}]", seen, constructor))
        return items
    if node.tag == "tag:yaml.org,2002:bool" and node.value.lower() not in ("true", "false"):
        # YAML 1.2 reads yes, no, on and off as text, as a card's writer means them (a side called "no").
        return node.value
    try:
        return constructor.construct_object(node)
    except yaml.YAMLError as error:
        problems.add(line, path, f"This value cannot be read: {getattr(error, 'problem', error)}.")
        return None


# -- reading fields ------------------------------------------------------------------------------------------------
class Reader:
    """Reads one mapping's fields, noting each problem with its line and field path."""

    def __init__(self, data: Any, path: str, problems: Problems, line: int, allowed: tuple[str, ...]) -> None:
        self.problems = problems
        self.path = path
        self.ok = isinstance(data, LMap)
        self.data: LMap = data if isinstance(data, LMap) else LMap()
        self.line = data.line if isinstance(data, LMap) else line
        if not self.ok:
            problems.add(line, path, "This must be a mapping of fields (key: value).")
            self.data.lines = {}
        for key in self.data:
            if key not in allowed:
                problems.add(
                    self.line_of(key), self.field(key), f"Unknown field {key!r}; the fields here are {listed(allowed)}."
                )

    def field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def line_of(self, key: str) -> int:
        return self.data.lines.get(key, self.line)

    def has(self, key: str) -> bool:
        return key in self.data

    def problem(self, key: str, message: str) -> None:
        self.problems.add(self.line_of(key), self.field(key), message)

    def text(self, key: str, default: str | None = None, limit: int = 2000) -> str:
        if key not in self.data:
            if default is None:
                self.problem(key, f"{key!r} is required.")
                return ""
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.problem(key, f"{key!r} must be text.")
            return default or ""
        value = str(value)
        if len(value) > limit:
            self.problem(key, f"{key!r} may be at most {limit:,} characters.")
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.text(key, default)
        if value not in choices:
            self.problem(key, f"{key!r} must be one of {listed(c or '(empty)' for c in choices)}, not {value!r}.")
            return default
        return value

    def slug(self, key: str, default: str | None = None, pattern: re.Pattern[str] = KEY) -> str:
        value = self.text(key, default, limit=100)
        if value and not pattern.fullmatch(value):
            self.problem(key, f"{value!r} is not a valid {key}: use lower-case letters, digits and _ (a letter first).")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.problem(key, f"{key!r} must be true or false.")
            return default
        return value

    def integer(self, key: str, default: int | None = None) -> int | None:
        if key not in self.data:
            if default is None:
                self.problem(key, f"{key!r} is required.")
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(key, f"{key!r} must be a whole number.")
            return default
        return value

    def listing(self, key: str, required: bool = False) -> LList:
        value = self.data.get(key)
        if value is None:
            if required:
                self.problem(key, f"{key!r} is required and must list at least one entry.")
            empty = LList()
            empty.line, empty.lines = self.line_of(key), []
            return empty
        if not isinstance(value, LList):
            self.problem(key, f"{key!r} must be a list.")
            empty = LList()
            empty.line, empty.lines = self.line_of(key), []
            return empty
        if required and not value:
            self.problem(key, f"{key!r} must list at least one entry.")
        return value

    def template(self, key: str, context: str, in_repeat: bool, required: bool = False) -> Template:
        """A template whose placeholders are checked later against `context` (see `placeholder_problem`)."""
        if key not in self.data:
            if required:
                self.problem(key, f"{key!r} is required.")
            return EMPTY
        source = self.text(key, "", limit=MAX_TEMPLATE)
        try:
            template = parse_template(source)
        except TemplateError as error:
            self.problem(key, str(error))
            # Not empty, so nothing else reports it missing; it renders to nothing, but a card with a problem
            # never runs.
            return Template(source=source, parts=(), names=frozenset())
        self.problems.templates.append((template, context, in_repeat, self.line_of(key), self.field(key), False))
        return template


def listed(items: Any) -> str:
    """Items as a problem names them: "a, b, c"."""
    return ", ".join(str(i) for i in items)
