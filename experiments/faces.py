"""An experiment's faces beyond its pages (batches/faces.py): the spec `POST /experiments` takes, as the command
line's YAML (experiments/spec.py) in JSON, and what the API serves of it."""

from __future__ import annotations

from typing import Annotated, Literal

from ninja import Field

from batches.faces import Faces, Name, Options, People
from chaoslm.schemas import Input
from debates.formats.evidence.prompts import MAX_ANSWER, MAX_PASSAGE, MAX_QUESTION
from experiments import exports, services, spec, views
from experiments.arena import ARENA
from experiments.design import PROTOCOLS
from experiments.questions import MAX_QUESTIONS

PROTOCOL_NAMES = tuple(PROTOCOLS)


class EvidenceQuestionIn(Input):
    passage: Annotated[str, Field(max_length=MAX_PASSAGE)]
    question: Annotated[str, Field(max_length=MAX_QUESTION)]
    answers: Annotated[list[Annotated[str, Field(max_length=MAX_ANSWER)]], Field(min_length=2, max_length=2)]
    correct: Literal[0, 1] | None = None


class ExperimentSpecIn(Input):
    """The keys of `manage.py experiment run`'s YAML spec, as JSON; persona names only, questions inline."""

    name: Name
    protocols: Annotated[list[Literal[PROTOCOL_NAMES]], Field(max_length=len(PROTOCOLS))] = Field(  # type: ignore[valid-type]
        description="Which protocols each question is run under"
    )
    debaters: People = Field(default_factory=list, description="Persona names")
    judges: People = Field(description="Persona names")
    questions: Annotated[list[EvidenceQuestionIn], Field(max_length=MAX_QUESTIONS)] | None = Field(
        None, description="Each as a line of a question set: passage, question, answers (two), correct (0, 1, null)"
    )
    sample: bool = Field(False, description="The project's own sample questions instead of `questions`")
    options: Options = Field(default_factory=dict, description="rounds, word_limit, simultaneous")
    concurrency: int = 8
    visibility: Literal["private", "unlisted", "public"] = "private"
    arena: bool = Field(False, description="Its finished evidence debates go, without names, to the blind arena")


FACES = Faces(
    spec_schema=ExperimentSpecIn,
    read=spec.from_mapping,
    check=services.check_experiment,
    create=services.create_experiment,
    report=exports.as_json,
    files=views.EXPORTS,
    arena=ARENA,
)
