"""`manage.py experiment run SPEC.yaml`: reading the spec file into the arguments of `create_experiment`.

name: Does debate help?
questions_file: evidence-sample.jsonl    # or `sample: true` for the project's own set
protocols: [evidence_debate, consultancy, blind, oracle]
debaters: [Ada Sterling, personas/marcus-vale.yaml]
judges: [Judge Okafor]
options: {rounds: 2, word_limit: 120, simultaneous: 0}
concurrency: 8
visibility: unlisted
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batches.panel import Contestant
from batches.spec import SpecError, load_mapping, people, whole_number
from chaoslm.sharing import Visibility
from experiments.questions import EvidenceQuestion, QuestionsError, parse_file, sample

KEYS = {"name", "questions_file", "sample", "protocols", "debaters", "judges", "options", "concurrency", "visibility"}


@dataclass
class ExperimentSpec:
    name: str
    questions: list[EvidenceQuestion]
    protocols: list[str]
    debaters: list[Contestant]
    judges: list[Contestant]
    options: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 8
    visibility: str = Visibility.PRIVATE


def _questions(data: dict[str, Any], base: Path, source: str) -> list[EvidenceQuestion]:
    if ("questions_file" in data) == bool(data.get("sample")):
        raise SpecError(f"{source}: give either questions_file or sample: true")
    try:
        if data.get("sample"):
            return sample()
        path = base / str(data["questions_file"])
        if not path.is_file():
            raise SpecError(f"{source}: questions_file: no such file {path}")
        return parse_file(str(path), path.read_bytes())
    except QuestionsError as error:
        raise SpecError("; ".join(error.problems)) from None


def read_spec(path: Path) -> ExperimentSpec:
    source = str(path)
    data = load_mapping(path, KEYS, "name, protocols, debaters, judges")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise SpecError(f"{source}: options: expected a mapping such as {{rounds: 2}}")
    protocols = data.get("protocols")
    if not isinstance(protocols, list) or not all(isinstance(p, str) for p in protocols):
        raise SpecError(f"{source}: protocols: expected a list such as [evidence_debate, blind]")
    base = path.parent
    seated = people(data, base, source)
    return ExperimentSpec(
        name=str(data.get("name") or path.stem),
        questions=_questions(data, base, source),
        protocols=protocols,
        debaters=seated["debaters"],
        judges=seated["judges"],
        options=dict(options),
        concurrency=whole_number(data, "concurrency", 8, source),
        visibility=str(data.get("visibility", Visibility.PRIVATE)),
    )
