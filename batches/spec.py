"""A batch's YAML spec file (`manage.py tournament run`, `manage.py experiment run`): what every kind reads alike,
the file as a mapping of known keys, its people (persona names or YAML files), its whole numbers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from batches.checks import BatchError, Contestant
from batches.models import BatchRecord
from personas.models import Persona
from personas.yaml_io import PersonaYAMLError, parse_personas

MAX_SPEC_BYTES = 1024 * 1024
T = TypeVar("T")


class SpecError(ValueError):
    """A spec that cannot be read; the message names the file and the key."""


class SpecErrors(SpecError):
    """Every problem of a spec at once, each as (the key it is about, its message): the API lists them all.
    `partial`: what could be read of it, each refused key's value its default (or the part of it that reads), for
    the kind's own checks of the rest (`checked`)."""

    def __init__(self, problems: list[tuple[str, str]], partial: Any = None) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems
        self.partial = partial


class Problems:
    """Reads a spec key by key, keeping each key's problem and going on, so all are told at once (`done`)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def read(self, key: str, reader: Callable[[], T], default: T) -> T:
        try:
            return reader()
        except SpecErrors as errors:
            self.found += errors.problems
            if errors.partial is not None:
                return errors.partial  # type: ignore[no-any-return]
        except SpecError as error:
            self.found.append((key, str(error)))
        return default

    def done(self, partial: Any = None) -> None:
        if self.found:
            raise SpecErrors(self.found, partial)


S = TypeVar("S")
R = TypeVar("R")


def checked(read: Callable[[], S], check: Callable[[S], R]) -> tuple[S, R]:
    """The spec `read` makes, and what its kind's checks (`check`: those its create makes, nothing saved) find of
    it, every problem of both told at once (SpecErrors; the kind's BatchError when only its checks refuse it). A
    check's problem about a key whose reading was refused is left out: it would be about the stand-in, not what
    was written (two debaters left of three, one misspelt, are not 'too few debaters')."""
    try:
        spec = read()
    except SpecErrors as errors:
        if errors.partial is None:
            raise
        told = {key for key, _ in errors.problems}
        try:
            check(errors.partial)
        except BatchError as refused:
            more = [(p.keys[0], p.message) for p in refused.problems if not told & set(p.keys)]
            raise SpecErrors(errors.problems + more) from None
        raise
    return spec, check(spec)


def contestant(value: Any, base: Path | None, where: str) -> Contestant:
    """A persona's name in the database, or the path (relative to the spec) of a YAML file holding one. With no
    `base` (a spec sent over the API) no file is read: names only."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{where}: expected a persona name or a YAML file path")
    if base is None:
        if value.endswith((".yaml", ".yml")):
            raise SpecError(f"{where}: persona files are read on the command line only; give a persona's name")
        path = None
    else:
        path = base / value
    if path is not None and (path.suffix in (".yaml", ".yml") or path.is_file()):
        if not path.is_file():
            raise SpecError(f"{where}: no such persona file {value}")
        try:
            specs = parse_personas(path.read_bytes(), str(path))
        except PersonaYAMLError as error:
            raise SpecError(str(error)) from None
        if len(specs) != 1:
            raise SpecError(f"{where}: {value} holds {len(specs)} personas; give a file with one")
        return Contestant(spec=specs[0])
    persona = Persona.objects.filter(name=value).first() or Persona.objects.filter(name__iexact=value).first()
    if persona is None:
        known = ", ".join(Persona.objects.values_list("name", flat=True)) or "none yet: run import_personas"
        raise SpecError(f"{where}: no persona is named {value!r} (known: {known}); or give a YAML file path")
    return Contestant.of(persona)


def whole_number(data: dict[str, Any], key: str, default: int, source: str) -> int:
    value = data.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise SpecError(f"{source}: {key}: expected a whole number")
    return value


# A batch's name: the column's bound, as the new-tournament and new-experiment forms hold it.
MAX_NAME_CHARS = BatchRecord._meta.get_field("name").max_length


def batch_name(data: dict[str, Any], default: str, source: str) -> str:
    """The spec's `name` (else `default`, the file's stem): text of at most MAX_NAME_CHARS characters."""
    value = data.get("name") or default
    if not isinstance(value, str):
        raise SpecError(f"{source}: name: expected text")
    if len(value) > MAX_NAME_CHARS:
        raise SpecError(f"{source}: name: at most {MAX_NAME_CHARS} characters, not {len(value)}")
    return value


def yes_no(data: dict[str, Any], key: str, default: bool, source: str) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"{source}: {key}: true or false")
    return value


def load_mapping(path: Path, keys: set[str], hint: str) -> dict[str, Any]:
    """A batch's YAML spec file as a mapping with only `keys` (SpecError naming the file otherwise); `hint` lists
    some keys for the message about a file that is not a mapping."""
    source = str(path)
    if not path.is_file():
        raise SpecError(f"{source}: no such file")
    if path.stat().st_size > MAX_SPEC_BYTES:
        raise SpecError(f"{source}: larger than {MAX_SPEC_BYTES // 1024} KB")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise SpecError(f"{source}: not valid YAML ({error})") from None
    check_mapping(data, keys, hint, source)
    return data


def check_mapping(data: Any, keys: set[str], hint: str, source: str) -> None:
    """SpecError unless `data` is a mapping with only `keys`: every unknown key is told (SpecErrors)."""
    if not isinstance(data, dict):
        raise SpecError(f"{source}: expected a mapping of keys ({hint} ...)")
    unknown = sorted(set(map(str, data)) - keys)
    if unknown:
        known = ", ".join(sorted(keys))
        raise SpecErrors([(key, f"{source}: unknown key {key!r}; the keys are {known}") for key in unknown])


def people(data: dict[str, Any], base: Path | None, source: str) -> dict[str, list[Contestant]]:
    """The spec's `debaters` and `judges`, each a list of persona names or YAML paths (relative to the spec);
    every wrong one is told (SpecErrors, with those that read as its `partial`)."""
    out: dict[str, list[Contestant]] = {"debaters": [], "judges": []}
    problems = Problems()
    for key in out:
        values = data.get(key, [])
        if not isinstance(values, list):
            problems.found.append((key, f"{source}: {key}: expected a list of persona names or YAML paths"))
            continue
        for i, value in enumerate(values, start=1):
            try:
                out[key].append(contestant(value, base, f"{source}: {key}[{i}]"))
            except SpecError as error:
                problems.found.append((key, str(error)))
    problems.done(out)
    return out


def spec_arguments(spec: Any) -> dict[str, Any]:
    """A kind's spec (a dataclass whose fields are its kind's create arguments) as those arguments: the command
    line and the API create a batch from it alike."""
    return {field.name: getattr(spec, field.name) for field in dataclasses.fields(spec)}
