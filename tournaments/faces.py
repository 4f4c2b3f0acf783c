"""A tournament's faces beyond its pages (batches/faces.py): the spec `POST /tournaments` takes, as the command
line's YAML (tournaments/spec.py) in JSON, and what the API serves of it."""

from __future__ import annotations

from typing import Annotated, Literal

from ninja import Field

from batches.faces import Faces, Name, Options, People, PersonaName
from chaoslm.schemas import Input
from tournaments import design, exports, services, spec, views
from tournaments.arena import ARENA
from tournaments.models import Match
from tournaments.questions import MAX_QUESTIONS, MAX_TEXT

Topic = Annotated[str, Field(max_length=MAX_TEXT)]
FormatName = Annotated[str, Field(max_length=Match._meta.get_field("format").max_length)]


class QuestionIn(Input):
    topic: Topic
    premise: Topic = ""
    correct: Literal["for", "against", ""] | None = Field(None, description="The side a judge should find for")


class TournamentSpecIn(Input):
    """The keys of `manage.py tournament run`'s YAML spec, as JSON; persona names only (no files)."""

    name: Name
    format: FormatName | Annotated[list[FormatName], Field(max_length=20)] = Field(
        design.DEFAULT, description=f"{', '.join(design.formats())}, a protocol card's name, or a list of them"
    )
    debaters: People = Field(description="Persona names, at least two")
    judges: People = Field(description="Persona names")
    questions: Annotated[list[Topic | QuestionIn], Field(max_length=MAX_QUESTIONS)] = Field(
        description="Topics, or {topic, premise, correct: for|against}"
    )
    options: Options = Field(default_factory=dict, description="The formats' options, e.g. {turns: 4}")
    sides: Literal["both", "once"] = "both"
    repeats: int = 1
    concurrency: int = 8
    visibility: Literal["private", "unlisted", "public"] = "private"
    moderator: PersonaName | None = Field(
        None, description="A persona's name: leads each debate of a format with a moderator's seat (classic)"
    )
    arena: bool = Field(False, description="Its finished matches go, without names, to the blind arena (/arena/)")


FACES = Faces(
    spec_schema=TournamentSpecIn,
    read=spec.from_mapping,
    check=services.check_tournament,
    create=services.create_tournament,
    report=exports.as_json,
    files=views.EXPORTS,
    arena=ARENA,
)
