"""A comparison's faces beyond its pages (batches/faces.py): the spec `POST /comparisons` takes, as the command
line's YAML (comparisons/spec.py) in JSON, what the API serves of it, and its estimate, which also says its
fewest calls."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from ninja import Field

from batches.faces import EstimateOut, Faces, Name, Options, PersonaName, estimate_json
from chaoslm.schemas import Input
from comparisons import exports, question_sets, services, spec, views


class ArmIn(Input):
    format: str = Field(description="A card or format whose outcome carries an answer (single-agent, mad, ...)")
    name: str = Field("", description="The arm's name in the report (default: its format's)")
    persona: PersonaName | None = Field(None, description="The persona in its every seat (default: the spec's)")
    agents: int | None = Field(None, description="How many agents sit (its required seats, up to all)")
    personas: dict[str, PersonaName] = Field(default_factory=dict, description="A persona for particular seats")
    options: Options = Field(default_factory=dict, description="The format's options (rounds ...)")


class GoldQuestionIn(Input):
    id: str | int | None = None
    question: str
    choices: list[str] | None = None
    answer: str | int | float
    material: str | None = None


class ComparisonSpecIn(Input):
    """The keys of `manage.py comparison run`'s YAML spec, as JSON; persona names only, questions inline or a
    sample's."""

    name: Name | None = None
    title: Name | None = Field(None, description="Another word for `name`")
    questions: Annotated[list[GoldQuestionIn], Field(max_length=question_sets.MAX_QUESTIONS)] | None = Field(
        None, description="Each as a line of a question set: question, choices, answer, material (and id)"
    )
    sample: Literal["arithmetic", "multiple-choice"] | None = Field(
        None, description="A shipped question set instead of `questions`"
    )
    count: int = Field(100, description="The arithmetic sample's size")
    difficulty: Literal[1, 2, 3] = 3
    seed: int = 0
    persona: PersonaName | None = Field(None, description="The persona in every seat of every arm")
    arms: Annotated[list[ArmIn], Field(min_length=1)]
    concurrency: int = 8
    visibility: Literal["private", "unlisted", "public"] = "private"


class ComparisonEstimateOut(EstimateOut):
    fewest_calls: int = Field(description="The fewest LLM calls: every stop condition holding at its first round")


def estimate(found: services.Checked) -> dict[str, Any]:
    return {**estimate_json(found), "fewest_calls": found.size.fewest_calls}


FACES = Faces(
    spec_schema=ComparisonSpecIn,
    read=spec.from_mapping,
    check=services.check_comparison,
    create=services.create_comparison,
    report=exports.as_json,
    files=views.EXPORTS,
    estimate=estimate,
    estimate_schema=ComparisonEstimateOut,
)
