"""A kind of batch's faces beyond its pages: what the JSON API serves at /<kind>s/... (create and estimate from its
spec, its report and exports, its share link's, its arena's opt-in), all read from the kind's `Faces`
(docs/adding-a-batch-kind.md). The API loops over the registered kinds; it names none.

A kind names its `Faces` by dotted path (`BatchKind.faces`, "tournaments.faces.FACES"): they are loaded with the
API, and so are django-ninja and pydantic, which the spec's schema is made of, never on a command's start
(tests/core/test_startup_imports.py). Here too are what every kind's spec schema is made of (a name, people,
options) and the estimate's answer, which a kind may extend (a comparison's says its fewest calls)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from ninja import Field, Schema

from batches.checks import cost_sentence
from batches.spec import MAX_NAME_CHARS
from personas.models import Persona

MAX_PERSONA_NAME = Persona._meta.get_field("name").max_length
# More people than any panel seats; the spec's own checks say how many each kind takes.
MAX_PEOPLE = 100

Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
PersonaName = Annotated[str, Field(max_length=MAX_PERSONA_NAME)]
People = Annotated[list[PersonaName], Field(max_length=MAX_PEOPLE)]
Options = Annotated[dict[Annotated[str, Field(max_length=40)], int], Field(max_length=20)]


class CostOut(Schema):
    low_usd: str = Field(description="The low end, in dollars (exact decimal)")
    high_usd: str = Field(description="The high end, in dollars (exact decimal)")
    unknown_price: bool = Field(description="Some of its models have no known price (not in the range)")
    sentence: str = Field(description="What the new form says of its cost")


class TimeOut(Schema):
    low_seconds: float = Field(description="At the fewest calls (every stop condition holding at its first round)")
    high_seconds: float = Field(description="At the most calls")
    text: str = Field(description="The time in minutes, as the new form says it: 'about 1 to 2 minutes'")
    seconds_per_call: float = Field(description="The pace: this site's recent calls, else the guess for its model")
    measured: bool = Field(description="Whether the pace is measured on this site's calls (else a guess)")
    calls_at_once: int = Field(description="Calls answered together: concurrency, within the embedded model's slots")
    basis: str = Field(description="How the time was reckoned, in the form's words")


class EstimateOut(Schema):
    debates: int = Field(description="Debates it would run (a tournament's judge replays and an experiment's runs)")
    calls: int = Field(description="The LLM calls they plan")
    sentence: str = Field(description="What the new form says of it")
    cost: CostOut = Field(description="What its calls would cost, low to high, as the new form says")
    time: TimeOut = Field(description="How long its calls take (the same figures as the form and the command line)")


def estimate_json(found: Any) -> dict[str, Any]:
    """What a kind's checks found (its `size`, `cost` and `time`), as the estimate answers it."""
    size = found.size
    return {
        "debates": size.debates,
        "calls": size.calls,
        "sentence": size.sentence(),
        "cost": {**found.cost.as_json(), "sentence": cost_sentence(found.cost)},
        "time": found.time.as_json(),
    }


@dataclass(frozen=True)
class Faces:
    """What a kind says of itself for the API; the operations made from it are the same for every kind."""

    # Its spec's keys as JSON (an `Input`: known keys only), documenting the body of its create and estimate.
    spec_schema: type[Schema]
    # The spec from a mapping, as the command line reads its YAML: (mapping, base, source) -> spec; SpecErrors.
    # The API gives no base, so no file on the server is read.
    read: Callable[[Any, Path | None, str], Any]
    check: Callable[..., Any]  # the spec's arguments and the owner -> what its checks found, nothing saved
    create: Callable[..., Any]  # the spec's arguments and the owner -> the batch; BatchError
    report: Callable[[Any], dict[str, Any]]  # the report.json export, as plain JSON
    files: Mapping[str, Callable[[Any], str]]  # its page's exports (views.EXPORTS): a file's name, its text
    estimate: Callable[[Any], dict[str, Any]] = estimate_json  # what `check` found, as the estimate answers
    estimate_schema: type[EstimateOut] = EstimateOut
    # Its arena (an audience/arena.py `Arena`) when its finished debates can go to one: the API offers its opt-in.
    arena: Any = None
