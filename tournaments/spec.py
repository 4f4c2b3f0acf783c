"""`manage.py tournament run SPEC.yaml`: reading the spec file into the arguments of `create_tournament`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batches.checks import Contestant
from batches.spec import (
    Problems,
    SpecError,
    batch_name,
    check_mapping,
    contestant,
    load_mapping,
    people,
    whole_number,
    yes_no,
)
from chaoslm.sharing import Visibility
from debates.models import FormatCard
from tournaments.design import DEFAULT
from tournaments.questions import MAX_TEXT, QuestionsError, QuestionSpec, parse_file
from tournaments.services import offered_formats

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
    "moderator",
    "arena",
}
HINT = "name, debaters, judges, questions"


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
    formats: list[str] = field(default_factory=lambda: [DEFAULT])
    moderator: Contestant | None = None  # leads each debate of a format with a moderator (classic)
    arena: bool = False  # its finished matches are served, without names, in the arena


def _questions(data: dict[str, Any], base: Path | None, source: str) -> list[QuestionSpec]:
    if ("questions" in data) == ("questions_file" in data):
        raise SpecError(f"{source}: give either questions or questions_file")
    try:
        if "questions_file" in data:
            if base is None:
                raise SpecError(f"{source}: questions_file: files are read on the command line only; give questions")
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
            premise = str(item.get("premise") or "").strip()
            if not topic:
                raise SpecError(f"{source}: questions[{index}]: the topic is empty")
            for name, text in (("topic", topic), ("premise", premise)):
                if len(text) > MAX_TEXT:  # as a questions file's line is refused, not cut short
                    raise SpecError(f"{source}: questions[{index}]: the {name} is longer than {MAX_TEXT} characters")
            out.append(QuestionSpec(topic, premise, correct))
        return out
    except QuestionsError as error:
        raise SpecError(f"{source}: " + "; ".join(error.problems)) from None


def read_spec(path: Path) -> TournamentSpec:
    data = load_mapping(path, KEYS, HINT)
    return from_mapping(data, path.parent, str(path), path.stem)


def from_mapping(data: Any, base: Path | None, source: str, default_name: str = "") -> TournamentSpec:
    """The spec from its mapping (a YAML file's, an API call's body), every problem told at once (SpecErrors).
    With no `base` (the API) no file is read: persona names and inline questions only."""
    check_mapping(data, KEYS, HINT, source)
    problems = Problems()
    chosen = problems.read("format", lambda: _formats(data, source), [DEFAULT])
    options = problems.read("options", lambda: _options(data, source), {})
    seated = problems.read("debaters", lambda: people(data, base, source), {"debaters": [], "judges": []})
    questions = problems.read("questions", lambda: _questions(data, base, source), [])
    repeats = problems.read("repeats", lambda: whole_number(data, "repeats", 1, source), 1)
    concurrency = problems.read("concurrency", lambda: whole_number(data, "concurrency", 8, source), 8)
    name = problems.read("name", lambda: batch_name(data, default_name, source), "")
    moderator = None
    if "moderator" in data:
        lead = data["moderator"]
        moderator = problems.read("moderator", lambda: contestant(lead, base, f"{source}: moderator"), None)
    arena = problems.read("arena", lambda: yes_no(data, "arena", False, source), False)
    spec = TournamentSpec(
        name=name,
        debaters=seated["debaters"],
        judges=seated["judges"],
        questions=questions,
        options=options,
        sides=str(data.get("sides", "both")),
        repeats=repeats,
        concurrency=concurrency,
        visibility=str(data.get("visibility", Visibility.PRIVATE)),
        formats=chosen,
        moderator=moderator,
        arena=arena,
    )
    problems.done(spec)
    return spec


def _formats(data: dict[str, Any], source: str) -> list[str]:
    chosen = data.get("format", DEFAULT)
    chosen = [chosen] if isinstance(chosen, str) else chosen
    # The built-ins and the cards anyone may use, by name; a person's own card is known too (whether its owner may
    # run it, and whether it has two sides, the tournament's creation checks).
    offered = list(offered_formats(None))
    known = {*offered, *FormatCard.objects.values_list("name", flat=True)}
    if not isinstance(chosen, list) or not chosen or not all(isinstance(f, str) and f in known for f in chosen):
        example = f"[{offered[0]}, {offered[-1]}]"
        raise SpecError(f"{source}: format: one of {', '.join(offered)}, or a list of them such as {example}")
    return chosen


def _options(data: dict[str, Any], source: str) -> dict[str, Any]:
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise SpecError(f"{source}: options: expected a mapping such as {{turns: 4}}")
    return dict(options)
