"""`manage.py tournament run SPEC.yaml`: reading the spec file into the arguments of `create_tournament`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from chaoslm.personas.models import Persona
from chaoslm.personas.yaml_io import PersonaYAMLError, parse_personas
from chaoslm.sharing import Visibility
from tournaments.questions import QuestionsError, QuestionSpec, parse_file
from tournaments.services import Contestant

KEYS = {
    "name",
    "format",
    "options",
    "debaters",
    "judges",
    "questions",
    "questions_file",
    "sides",
    "repeats",
    "concurrency",
    "visibility",
}
MAX_SPEC_BYTES = 1024 * 1024


class SpecError(ValueError):
    """A spec that cannot be read; the message names the file and the key."""


@dataclass
class TournamentSpec:
    name: str
    debaters: list[Contestant]
    judges: list[Contestant]
    questions: list[QuestionSpec]
    options: dict[str, Any] = field(default_factory=dict)
    sides: str = "both"
    repeats: int = 1
    concurrency: int = 8
    visibility: str = Visibility.PRIVATE


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


def _questions(data: dict[str, Any], base: Path, source: str) -> list[QuestionSpec]:
    if ("questions" in data) == ("questions_file" in data):
        raise SpecError(f"{source}: give either questions or questions_file")
    try:
        if "questions_file" in data:
            path = base / str(data["questions_file"])
            if not path.is_file():
                raise SpecError(f"{source}: questions_file: no such file {path}")
            try:
                return parse_file(str(path), path.read_bytes())
            except QuestionsError as error:
                # Its line numbers are the questions file's, not the spec's: name the file each is in.
                problems = "; ".join(f"{path}: {problem}" for problem in error.problems)
                raise SpecError(f"{problems} (the questions_file of {source})") from None
        raw = data["questions"]
        if not isinstance(raw, list) or not raw:
            raise SpecError(f"{source}: questions: expected a list of questions")
        out = []
        for index, item in enumerate(raw, start=1):
            if isinstance(item, str):
                item = {"topic": item}
            if not isinstance(item, dict) or set(item) - {"topic", "premise", "correct"}:
                raise SpecError(f"{source}: questions[{index}]: expected a topic, or topic/premise/correct")
            correct = item.get("correct") or ""
            if correct not in ("", "for", "against"):
                raise SpecError(f"{source}: questions[{index}]: correct must be for or against")
            topic = str(item.get("topic") or "").strip()
            if not topic:
                raise SpecError(f"{source}: questions[{index}]: the topic is empty")
            out.append(QuestionSpec(topic[:500], str(item.get("premise") or "").strip()[:500], correct))
        return out
    except QuestionsError as error:
        raise SpecError(f"{source}: " + "; ".join(error.problems)) from None


def _int(data: dict[str, Any], key: str, default: int, source: str) -> int:
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


def read_spec(path: Path) -> TournamentSpec:
    source = str(path)
    data = load_mapping(path, KEYS, "name, debaters, judges, questions")
    if data.get("format", "duel") != "duel":
        raise SpecError(f"{source}: format: tournaments run the judged duel ('duel')")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise SpecError(f"{source}: options: expected a mapping such as {{turns: 4}}")
    base = path.parent
    people = {}
    for key in ("debaters", "judges"):
        values = data.get(key)
        if not isinstance(values, list):
            raise SpecError(f"{source}: {key}: expected a list of persona names or YAML paths")
        people[key] = [contestant(v, base, f"{source}: {key}[{i}]") for i, v in enumerate(values, start=1)]
    return TournamentSpec(
        name=str(data.get("name") or path.stem),
        debaters=people["debaters"],
        judges=people["judges"],
        questions=_questions(data, base, source),
        options=dict(options),
        sides=str(data.get("sides", "both")),
        repeats=_int(data, "repeats", 1, source),
        concurrency=_int(data, "concurrency", 8, source),
        visibility=str(data.get("visibility", Visibility.PRIVATE)),
    )
