"""A batch's YAML spec file (`manage.py tournament run`, `manage.py experiment run`): what every kind reads alike,
the file as a mapping of known keys, its people (persona names or YAML files), its whole numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from batches.panel import Contestant
from chaoslm.personas.models import Persona
from chaoslm.personas.yaml_io import PersonaYAMLError, parse_personas

MAX_SPEC_BYTES = 1024 * 1024


class SpecError(ValueError):
    """A spec that cannot be read; the message names the file and the key."""


def contestant(value: Any, base: Path, where: str) -> Contestant:
    """A persona's name in the database, or the path (relative to the spec) of a YAML file holding one."""
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{where}: expected a persona name or a YAML file path")
    path = base / value
    if path.suffix in (".yaml", ".yml") or path.is_file():
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
    if not isinstance(data, dict):
        raise SpecError(f"{source}: expected a mapping of keys ({hint} ...)")
    unknown = sorted(set(map(str, data)) - keys)
    if unknown:
        raise SpecError(f"{source}: unknown key {unknown[0]!r}; the keys are {', '.join(sorted(keys))}")
    return data


def people(data: dict[str, Any], base: Path, source: str) -> dict[str, list[Contestant]]:
    """The spec's `debaters` and `judges`, each a list of persona names or YAML paths (relative to the spec)."""
    out = {}
    for key in ("debaters", "judges"):
        values = data.get(key, [])
        if not isinstance(values, list):
            raise SpecError(f"{source}: {key}: expected a list of persona names or YAML paths")
        out[key] = [contestant(v, base, f"{source}: {key}[{i}]") for i, v in enumerate(values, start=1)]
    return out
