"""Persona YAML: parsing with field-level errors, and export.

A persona file holds one persona, or several as YAML documents separated by `---`. Parsing
refuses anchors and aliases outright (the "billion laughs" YAML bomb needs them, and personas
never do), files over CHAOSLM_PERSONA_MAX_BYTES, unknown keys and wrong types, each with an
error that names the file and the field; every field's problem is reported at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from django.conf import settings

ROLES = ("debater", "judge", "moderator", "analyzer", "solver", "chat")
TEXT_FIELDS = ("personality", "position", "instructions", "judging_criteria")
MAX_TEXT = 20_000
MAX_FORMATS = 20
FORMAT_NAME = re.compile(r"[a-z][a-z_]{0,29}")


class PersonaYAMLError(ValueError):
    """What is wrong with a persona file: one problem, or several (`errors`, each naming its file and field)."""

    def __init__(self, source: str, field: str | None, message: str) -> None:
        self.source = source
        self.field = field
        self.message = message
        self.errors: list[PersonaYAMLError] = [self]
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {message}")

    @classmethod
    def of(cls, errors: list[PersonaYAMLError]) -> PersonaYAMLError:
        """Every problem found, at once: a person fixes them all in one go, not one per try."""
        if len(errors) == 1:
            return errors[0]
        first = errors[0]
        combined = cls(first.source, first.field, first.message)
        combined.errors = [e for error in errors for e in error.errors]
        combined.args = ("; ".join(str(e) for e in combined.errors),)
        return combined


@dataclass(frozen=True)
class PersonaSpec:
    name: str
    role: str
    personality: str
    position: str = ""
    instructions: str = ""
    judging_criteria: str = ""
    model: str = ""
    provider: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    # The formats whose seats offer this persona (a panel's moderator is no moderator for a classic debate);
    # empty: every format.
    formats: tuple[str, ...] = ()

    def system_prompt(self, seat_role: str | None = None) -> str:
        """The exact system prompt for this persona in a seat of `seat_role` (default: its own role).

        Debaters get personality, position and instructions; judges personality and judging
        criteria (judged-duel.md); other seats personality and instructions. Blank parts are left
        out so no stray blank lines reach the model.
        """
        role = seat_role or self.role
        if role == "judge":
            parts = (self.personality, self.judging_criteria)
        elif role == "debater":
            parts = (self.personality, self.position, self.instructions)
        else:
            parts = (self.personality, self.instructions)
        return "\n\n".join(p.strip() for p in parts if p and p.strip())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in ("", None, ()):
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


_KNOWN = {f.name for f in fields(PersonaSpec)}
_REQUIRED = ("name", "role", "personality")


def _check_type(source: str, key: str, value: Any) -> Any:
    if key in ("name", "role", "model", "provider", *TEXT_FIELDS):
        if not isinstance(value, str):
            raise PersonaYAMLError(source, key, f"must be text, not {type(value).__name__}")
        value = value.strip() if key in ("name", "role", "model", "provider") else value.rstrip()
        limit = 100 if key == "name" else MAX_TEXT
        if len(value) > limit:
            raise PersonaYAMLError(source, key, f"is {len(value)} characters long; the limit is {limit}")
        if key == "role" and value not in ROLES:
            raise PersonaYAMLError(source, key, f"must be one of {', '.join(ROLES)}, not {value!r}")
        return value
    if key == "temperature":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2:
            raise PersonaYAMLError(source, key, f"must be a number from 0 to 2, not {value!r}")
        return float(value)
    if key == "formats":
        if not isinstance(value, list) or len(value) > MAX_FORMATS:
            raise PersonaYAMLError(source, key, f"must be a list of at most {MAX_FORMATS} format names, e.g. [panel]")
        wrong = [name for name in value if not isinstance(name, str) or not FORMAT_NAME.fullmatch(name)]
        if wrong:
            raise PersonaYAMLError(source, key, f"must name formats (duel, classic, panel ...), not {wrong[0]!r}")
        return tuple(value)
    if key == "max_tokens":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 32768:
            raise PersonaYAMLError(source, key, f"must be a whole number from 1 to 32768, not {value!r}")
        return value
    raise AssertionError(key)


def spec_from_mapping(data: Any, source: str) -> PersonaSpec:
    """The persona in `data`; PersonaYAMLError naming every field that is wrong, not only the first."""
    if not isinstance(data, dict):
        raise PersonaYAMLError(source, None, "a persona must be a mapping of fields (name: ..., role: ...)")
    errors = [
        PersonaYAMLError(source, key, f"unknown field; the known fields are {', '.join(sorted(_KNOWN))}")
        for key in sorted(str(k) for k in data if k not in _KNOWN)
    ]
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _KNOWN or value is None:
            continue
        try:
            values[key] = _check_type(source, key, value)
        except PersonaYAMLError as error:
            errors.append(error)
    for key in _REQUIRED:
        # A required field left out, empty or blank; one of the wrong type has its own error already.
        if data.get(key) in (None, "") or (isinstance(values.get(key), str) and not values[key].strip()):
            errors.append(PersonaYAMLError(source, key, "is required"))
    if errors:
        raise PersonaYAMLError.of(errors)
    return PersonaSpec(**values)


def parse_personas(text: str | bytes, source: str) -> list[PersonaSpec]:
    """Parse every persona in a file's text; PersonaYAMLError with every problem its personas have."""
    limit = settings.CHAOSLM_PERSONA_MAX_BYTES
    size = len(text.encode() if isinstance(text, str) else text)
    if size > limit:
        raise PersonaYAMLError(source, None, f"is {size:,} bytes; persona files may be at most {limit:,} bytes")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise PersonaYAMLError(source, None, "is not UTF-8 text") from None
    # PyYAML is imported on the first parse or dump, not with this module: the models import it, and PyYAML was
    # a tenth of the start of every command.
    import yaml

    from personas.yaml_syntax import MAX_DEPTH, NoAliasLoader, TooDeep

    try:
        documents = [d for d in yaml.load_all(text, Loader=NoAliasLoader) if d is not None]
    except TooDeep as error:
        raise PersonaYAMLError(
            source,
            error.field,
            f"is nested more than {MAX_DEPTH} levels deep (line {error.mark.line + 1}); "
            "persona fields are text or numbers",
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise PersonaYAMLError(source, None, f"is not valid YAML{line}: {error.problem or error}") from None
    except yaml.YAMLError as error:
        raise PersonaYAMLError(source, None, f"is not valid YAML: {error}") from None
    specs: list[PersonaSpec] = []
    errors: list[PersonaYAMLError] = []
    for index, document in enumerate(documents):
        items = document if isinstance(document, list) else [document]
        for position, item in enumerate(items):
            where = source if len(documents) == 1 and len(items) == 1 else f"{source} (persona {index + position + 1})"
            try:
                specs.append(spec_from_mapping(item, where))
            except PersonaYAMLError as error:
                errors.append(error)
    if errors:
        raise PersonaYAMLError.of(errors)
    if not specs:
        raise PersonaYAMLError(source, None, "holds no persona")
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise PersonaYAMLError(source, "name", f"{duplicates[0]!r} appears more than once")
    return specs


def dump_persona(spec: PersonaSpec) -> str:
    import yaml  # on first use, as in parse_personas

    from personas.yaml_syntax import Dumper

    return yaml.dump(spec.to_dict(), Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100)


def dump_personas(specs: list[PersonaSpec]) -> str:
    return "---\n".join(dump_persona(s) for s in specs)
