"""A card's YAML read with the line of every mapping and key, and the fields of one mapping read from it, each
problem noted with its line and field path (docs/cards.md, "Checks and caps"). spec.py reads a whole card with
these."""

from __future__ import annotations

import difflib
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


# A top-level part the rest of a card reads, and the word a problem of such a reading uses.
READ_BY_NAME = (("seats", "seat"), ("sides", "side"), ("options", "option"))


class Problems:
    def __init__(self) -> None:
        self.items: list[CardProblem] = []
        # Each template with where it stands: (template, context, in_repeat, line, field, in an answering speech).
        self.templates: list[tuple[Template, str, bool, int, str, bool]] = []
        # The parts of a card whose YAML could not be read (`load_yaml`): each one's field and text, and the syntax
        # problems saying so (among `items`, and always kept).
        self.unreadable: list[tuple[str, str]] = []
        self.syntax: set[CardProblem] = set()

    def add(self, line: int, field: str, message: str) -> None:
        self.items.append(CardProblem(line, field, message))

    def add_syntax(self, problem: CardProblem) -> None:
        self.items.append(problem)
        self.syntax.add(problem)

    def found(self) -> list[CardProblem]:
        """Every problem, in the card's order. Where parts of the card could not be read, the rest was checked
        without them: a problem is kept only where it cannot come from what is missing (it stands in a part that
        was read, outside the judge, the decision and the card as a whole, which read every stage, and it names
        nothing the unreadable text names)."""
        items = self.items
        if self.unreadable:
            missing = {key for key, _ in self.unreadable}
            words = {name for key, text in self.unreadable for name in _defined(key, text)}
            stages_missing = any(key.startswith(("stages", "on_end")) for key in missing)

            # What the rest reads of these, by the word its problems use ("There is no seat called ...").
            nouns = [noun for key, noun in READ_BY_NAME if key in missing]

            def kept(problem: CardProblem) -> bool:
                field = problem.field
                top = re.split(r"[.\[]", field, maxsplit=1)[0]
                if problem in self.syntax:
                    return True
                if (
                    not field
                    or top in missing
                    or any(field == k or field.startswith((f"{k}.", f"{k}[")) for k in missing)
                ):
                    return False
                if any(noun in problem.message.lower() for noun in nouns):
                    return False
                if stages_missing and top in ("judge", "decision"):
                    return False
                return not _names(problem.message) & words

            items = [p for p in items if kept(p)]
        return sorted(set(items), key=lambda p: (p.line, p.field))


def _defined(key: str, text: str) -> set[str]:
    """The names an unreadable part of a card may define, for the rest to read: seat keys, step names and, in
    `options`, the options."""
    names = set(re.findall(r"\b(?:key|speech|plan|think|step|cross)\s*:\s*([A-Za-z_]\w*)", text))
    if key == "options":
        names |= set(re.findall(r"(?m)^\s+([A-Za-z_]\w*)\s*:", text))
    return names


def _names(message: str) -> set[str]:
    """The names a problem quotes ('pm', {last_closing}), as words."""
    quoted = re.findall(r"'([^']*)'|\{([^}]*)\}", message)
    return {word for pair in quoted for part in pair for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", part)}


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
        node = _readable_parts(text, problems, error)
        if node is None:
            return None
    if node is None:
        problems.add(1, "", "The card is empty.")
        return None
    return _convert(node, problems, "", set(), yaml.constructor.SafeConstructor())


def _syntax_problem(error: yaml.YAMLError) -> CardProblem:
    """A YAML error at the line it names: where an unclosed bracket or quote began, which is where the mistake is
    (PyYAML notices it lines later), else where it was noticed."""
    context, mark = getattr(error, "context_mark", None), getattr(error, "problem_mark", None)
    what = getattr(error, "problem", None) or str(error).splitlines()[0]
    started = getattr(error, "context", None) or ""
    if context is not None and mark is not None and context.line != mark.line:
        if "flow" in started or "quoted" in started:
            line = context.line + 1
            return CardProblem(line, "", f"The YAML cannot be read: {started} (line {line}), {what}.")
        where = f" ({started} from line {context.line + 1})"
        return CardProblem(mark.line + 1, "", f"The YAML cannot be read: {what}{where}.")
    mark = mark or context
    return CardProblem(mark.line + 1 if mark is not None else 1, "", f"The YAML cannot be read: {what}.")


# A top-level key's first line, and a list item's (`  - ...`).
_TOP_KEY = re.compile(r"[A-Za-z_][\w-]*\s*:")
_ITEM = re.compile(r"(\s*)- ")


def _readable_parts(text: str, problems: Problems, error: yaml.YAMLError) -> yaml.Node | None:
    """A card whose YAML cannot be read whole, read part by part so that its other problems are found too: each
    top-level key on its own, and each stage of `stages` and `on_end`. Every part that cannot be read is a syntax
    problem at its line; a stage that cannot be read stands as an empty one, so the others keep their places. The
    node of what could be read, or None when nothing could be told apart."""
    import yaml

    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if _TOP_KEY.match(line)]
    if len(starts) < 2:
        problems.add_syntax(_syntax_problem(error))
        return None
    blocks = [(start, end) for start, end in zip(starts, [*starts[1:], len(lines)], strict=True)]
    kept = [""] * len(lines)

    def readable(numbers: range | set[int]) -> yaml.YAMLError | None:
        part = [lines[i] if i in numbers else "" for i in range(len(lines))]
        try:
            yaml.compose("\n".join(part), Loader=yaml.SafeLoader)
        except yaml.YAMLError as failure:
            return failure
        return None

    for start, end in blocks:
        key = lines[start].split(":", 1)[0].strip()
        failure = readable(range(start, end))
        if failure is None:
            kept[start:end] = lines[start:end]
            continue
        indents = {i: len(m.group(1)) for i in range(start + 1, end) if (m := _ITEM.match(lines[i]))}
        indent = min(indents.values(), default=0)
        items = [i for i, width in indents.items() if width == indent]
        if key not in ("stages", "on_end") or not items:
            problems.add_syntax(_syntax_problem(failure))
            problems.unreadable.append((key, "\n".join(lines[start:end])))
            continue
        kept[start] = lines[start]
        for number, (first, last) in enumerate(zip(items, [*items[1:], end], strict=True), start=1):
            item_failure = readable({start, *range(first, last)})
            if item_failure is None:
                kept[first:last] = lines[first:last]
            else:
                problems.add_syntax(_syntax_problem(item_failure))
                problems.unreadable.append((f"{key}[{number}]", "\n".join(lines[first:last])))
                kept[first] = " " * indent + "- {}"
    if not problems.unreadable:  # every part reads alone but not together: say what the whole says
        problems.add_syntax(_syntax_problem(error))
        return None
    try:
        return yaml.compose("\n".join(kept), Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None


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
                close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.75)
                guess = f" (did you mean {close[0]!r}?)" if close else ""
                problems.add(
                    self.line_of(key),
                    self.field(key),
                    f"Unknown field {key!r}{guess}; the fields here are {listed(allowed)}.",
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
