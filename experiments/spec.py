"""`manage.py experiment run SPEC.yaml`: reading the spec file into the arguments of `create_experiment`.

name: Does debate help?
questions_file: evidence-sample.jsonl    # or `sample: true` for the project's own set, or `questions: [...]`
protocols: [evidence_debate, consultancy, blind, oracle]
debaters: [Ada Sterling, personas/samples/marcus-vale.yaml]
judges: [Judge Okafor]
options: {rounds: 2, word_limit: 120, simultaneous: 0}
concurrency: 8
visibility: unlisted
arena: true                             # its finished evidence debates go in the arena
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batches.checks import Contestant
from batches.spec import Problems, SpecError, batch_name, check_mapping, load_mapping, people, whole_number, yes_no
from chaoslm.sharing import Visibility
from experiments.questions import EvidenceQuestion, QuestionsError, parse_file, parse_jsonl, sample

KEYS = {
    "name",
    "questions_file",
    "questions",
    "sample",
    "protocols",
    "debaters",
    "judges",
    "options",
    "concurrency",
    "visibility",
    "arena",
}
HINT = "name, protocols, debaters, judges"


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
    arena: bool = False  # its finished evidence debates are served, without names, in the arena


def _questions(data: dict[str, Any], base: Path | None, source: str) -> list[EvidenceQuestion]:
    given = [key for key in ("questions_file", "questions") if key in data] + (["sample"] if data.get("sample") else [])
    if len(given) != 1:
        raise SpecError(f"{source}: give one of questions_file, questions or sample: true")
    try:
        if data.get("sample"):
            return sample()
        if "questions" in data:
            return _inline(data["questions"], source)
        if base is None:
            raise SpecError(f"{source}: questions_file: files are read on the command line only; give questions")
        path = base / str(data["questions_file"])
        if not path.is_file():
            raise SpecError(f"{source}: questions_file: no such file {path}")
        return parse_file(str(path), path.read_bytes())
    except QuestionsError as error:
        raise SpecError("; ".join(error.problems)) from None


def _inline(raw: Any, source: str) -> list[EvidenceQuestion]:
    """`questions`: a list of the question set's lines (passage, question, answers, correct), read as its file is."""
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise SpecError(f"{source}: questions: expected a list of mappings (passage, question, answers, correct)")
    return parse_jsonl("\n".join(json.dumps(item) for item in raw), f"{source}: questions")


def read_spec(path: Path) -> ExperimentSpec:
    data = load_mapping(path, KEYS, HINT)
    return from_mapping(data, path.parent, str(path), path.stem)


def from_mapping(data: Any, base: Path | None, source: str, default_name: str = "") -> ExperimentSpec:
    """The spec from its mapping (a YAML file's, an API call's body), every problem told at once (SpecErrors).
    With no `base` (the API) no file is read: persona names and inline questions (or the sample) only."""
    check_mapping(data, KEYS, HINT, source)
    problems = Problems()
    options = problems.read("options", lambda: _options(data, source), {})
    protocols = problems.read("protocols", lambda: _protocols(data, source), [])
    seated = problems.read("debaters", lambda: people(data, base, source), {"debaters": [], "judges": []})
    questions = problems.read("questions", lambda: _questions(data, base, source), [])
    concurrency = problems.read("concurrency", lambda: whole_number(data, "concurrency", 8, source), 8)
    name = problems.read("name", lambda: batch_name(data, default_name, source), "")
    arena = problems.read("arena", lambda: yes_no(data, "arena", False, source), False)
    spec = ExperimentSpec(
        name=name,
        questions=questions,
        protocols=protocols,
        debaters=seated["debaters"],
        judges=seated["judges"],
        options=options,
        concurrency=concurrency,
        visibility=str(data.get("visibility", Visibility.PRIVATE)),
        arena=arena,
    )
    problems.done(spec)
    return spec


def _options(data: dict[str, Any], source: str) -> dict[str, Any]:
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise SpecError(f"{source}: options: expected a mapping such as {{rounds: 2}}")
    return dict(options)


def _protocols(data: dict[str, Any], source: str) -> list[str]:
    protocols = data.get("protocols")
    if not isinstance(protocols, list) or not all(isinstance(p, str) for p in protocols):
        raise SpecError(f"{source}: protocols: expected a list such as [evidence_debate, blind]")
    return protocols
