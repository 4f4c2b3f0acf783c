"""`manage.py comparison run SPEC.yaml` and `POST /api/v1/comparisons`: reading a spec into the arguments of
`create_comparison`, every bad field told at once.

name: Du et al. against a majority vote      # or title:
sample: arithmetic                           # or sample: multiple-choice, questions_file: set.jsonl, questions: [...]
count: 100                                   # the arithmetic sample's size, difficulty (1-3) and seed
difficulty: 3
seed: 0
persona: Ada Sterling                        # the one persona in every seat of every arm (an arm may name its own)
arms:
  - {format: single-agent}
  - {format: self-consistency, agents: 5}
  - {format: multi-agent-debate, name: Du et al., agents: 3, options: {rounds: 2}}
  - {format: mad, options: {rounds: 3}, personas: {moderator: Judge Okafor}}
concurrency: 8
visibility: unlisted
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batches.checks import Contestant
from batches.spec import (
    Problems,
    SpecError,
    SpecErrors,
    batch_name,
    check_mapping,
    contestant,
    load_mapping,
    whole_number,
)
from chaoslm.sharing import Visibility
from comparisons import arithmetic, question_sets
from comparisons.arms import ArmRequest
from comparisons.question_sets import GoldQuestion, QuestionsError

KEYS = {
    "name",
    "title",
    "questions_file",
    "questions",
    "sample",
    "count",
    "difficulty",
    "seed",
    "persona",
    "arms",
    "concurrency",
    "visibility",
}
ARM_KEYS = {"name", "format", "persona", "agents", "personas", "options"}
HINT = "name, sample, questions_file or questions, persona, arms"
SAMPLES = ("arithmetic", "multiple-choice")


@dataclass
class ComparisonSpec:
    name: str
    questions: list[GoldQuestion]
    arms: list[ArmRequest]
    concurrency: int = 8
    visibility: str = Visibility.PRIVATE


def questions_of(data: dict[str, Any], base: Path | None, source: str) -> list[GoldQuestion]:
    """The spec's questions: a file (the command line only), a list of rows (`questions`, each as a line of a
    question set's JSONL), or a shipped sample (the arithmetic one drawn at `count`, `difficulty` and `seed`)."""
    given = [key for key in ("questions_file", "questions", "sample") if data.get(key) is not None]
    if len(given) != 1:
        raise SpecError(f"{source}: give one of questions_file, questions or sample ({' or '.join(SAMPLES)})")
    try:
        if "questions" in given:
            rows = data["questions"]
            if not isinstance(rows, list):
                raise SpecError(f"{source}: questions: expected a list of rows (question, choices, answer, material)")
            return question_sets.read_rows(rows, f"{source}: questions")
        if "sample" in given:
            which = data["sample"]
            if which == "multiple-choice":
                return question_sets.sample()
            if which != "arithmetic":
                raise SpecError(f"{source}: sample: {which!r} is none of {', '.join(SAMPLES)}")
            problems = Problems()
            count = problems.read("count", lambda: whole_number(data, "count", 100, source), 100)
            difficulty = problems.read("difficulty", lambda: whole_number(data, "difficulty", 3, source), 3)
            seed = problems.read("seed", lambda: whole_number(data, "seed", 0, source), 0)
            problems.done()
            try:
                return arithmetic.generate(count, difficulty, seed)
            except ValueError as error:
                raise SpecError(f"{source}: sample: {error}") from None
        if base is None:
            raise SpecError(f"{source}: questions_file: files are read on the command line only; give a sample")
        path = base / str(data["questions_file"])
        if not path.is_file():
            raise SpecError(f"{source}: questions_file: no such file {path}")
        return question_sets.read_file(str(path), path.read_bytes())
    except QuestionsError as error:
        raise SpecErrors([("questions", problem) for problem in error.problems]) from None


def _person(problems: Problems, value: Any, base: Path | None, where: str) -> Contestant | None:
    """The persona `value` names, or None with its problem kept."""
    return problems.read("arms", lambda: contestant(value, base, where), None)


def arms_of(data: dict[str, Any], base: Path | None, source: str) -> list[ArmRequest]:
    """The spec's arms, each a mapping (format, and optionally name, persona, agents, personas, options); every
    problem of every arm told."""
    raw = data.get("arms")
    if not isinstance(raw, list) or not raw:
        raise SpecError(f"{source}: arms: expected a list such as [{{format: single-agent}}, {{format: mad}}]")
    problems = Problems()
    default = None
    if data.get("persona") is not None:
        default = _person(problems, data["persona"], base, f"{source}: persona")
    out: list[ArmRequest] = []
    for number, arm in enumerate(raw, start=1):
        where = f"{source}: arms[{number}]"
        if not isinstance(arm, dict) or not isinstance(arm.get("format"), str):
            problems.found.append(("arms", f"{where}: expected a mapping with a format, such as {{format: mad}}"))
            continue
        unknown = sorted(set(map(str, arm)) - ARM_KEYS)
        problems.found += [
            ("arms", f"{where}: unknown key {key!r}; an arm's keys are {', '.join(sorted(ARM_KEYS))}")
            for key in unknown
        ]
        persona = default
        if arm.get("persona") is not None:
            persona = _person(problems, arm["persona"], base, f"{where}: persona")
        personas: dict[str, Contestant] = {}
        seated = arm.get("personas") or {}
        if not isinstance(seated, dict):
            problems.found.append(("arms", f"{where}: personas: expected a mapping of seat to persona"))
            seated = {}
        for key, value in seated.items():
            found = _person(problems, value, base, f"{where}: personas.{key}")
            if found is not None:
                personas[str(key)] = found
        agents = arm.get("agents")
        if agents is not None and (isinstance(agents, bool) or not isinstance(agents, int)):
            problems.found.append(("arms", f"{where}: agents: expected a whole number"))
            agents = None
        options = arm.get("options") or {}
        if not isinstance(options, dict):
            problems.found.append(("arms", f"{where}: options: expected a mapping such as {{rounds: 2}}"))
            options = {}
        name = arm.get("name") or ""
        if not isinstance(name, str):
            problems.found.append(("arms", f"{where}: name: expected text"))
            name = ""
        out.append(ArmRequest(arm["format"], persona, name, agents, personas, dict(options)))
    problems.done()
    return out


def read_spec(path: Path) -> ComparisonSpec:
    data = load_mapping(path, KEYS, HINT)
    return from_mapping(data, path.parent, str(path), path.stem)


def from_mapping(data: Any, base: Path | None, source: str, default_name: str = "") -> ComparisonSpec:
    """The spec from its mapping (a YAML file's, an API call's body), every problem told at once (SpecErrors).
    With no `base` (the API) no file is read: persona names and the samples only."""
    check_mapping(data, KEYS, HINT, source)
    problems = Problems()
    named = {"name": data.get("name") or data.get("title")}
    name = problems.read("name", lambda: batch_name(named, default_name, source), "")
    questions = problems.read("questions", lambda: questions_of(data, base, source), [])
    arms = problems.read("arms", lambda: arms_of(data, base, source), [])
    concurrency = problems.read("concurrency", lambda: whole_number(data, "concurrency", 8, source), 8)
    spec = ComparisonSpec(
        name=name,
        questions=questions,
        arms=arms,
        concurrency=concurrency,
        visibility=str(data.get("visibility", Visibility.PRIVATE)),
    )
    problems.done(spec)
    return spec
