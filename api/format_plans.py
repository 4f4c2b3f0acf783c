"""A format's plan over the API: the format page's (debates/format_views.py) every call in order at the options
given (over the defaults), the fewest and the most calls that is and how long they take at this site's recent pace.
The same `plan_context` and the same options (`debates.forms.given_options`) as the page: where the page marks a bad
option, this refuses it (422, every bad option at once, in the form's words); the same rule of which cards the
caller may see (404 for any other)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema

from api.problems import ApiError
from api.refusals import refusals
from debates import format_cards, format_views
from debates.formats import LISTED
from debates.forms import given_options

router = Router(tags=["formats"])


class PlanStepOut(Schema):
    ordinal: int
    who: str
    kind: str
    label: str
    visibility: str
    sees: str
    reads: list[str]
    judged_by: str
    calls_llm: bool
    phase: str


class PlanOut(Schema):
    options: dict[str, int] = Field(description="The options the plan is for: those given, the rest at their defaults")
    calls: int = Field(description="The most LLM calls a debate makes at those options")
    fewest_calls: int = Field(
        description="The fewest: every stop condition holding at its first round, no speech given only on an answer "
        "given (`calls` when a debate always makes them all)"
    )
    seconds_per_call: float | None = Field(
        description="This site's recent pace, else the embedded model's speed measured on this machine; none before "
        "either"
    )
    minutes: float | None = Field(description="How long the most calls take at that pace")
    steps: list[PlanStepOut] = Field(description="A card's every call in order (a built-in format lists none)")


@router.get(
    "/formats/{name}/plan",
    response={200: PlanOut, **refusals(404, 422)},
    summary="A format's plan at some options",
    openapi_extra={
        "parameters": [
            {
                "in": "query",
                "name": "option_<name>",
                "required": False,
                "schema": {"type": "integer"},
                "description": "An option's value, as the format page's form sends it (option_turns=4); those left out "
                "are at their defaults",
            }
        ]
    },
)
def plan(request: HttpRequest, name: str) -> Any:
    if name in LISTED:
        fmt = LISTED[name]
    else:
        try:
            fmt = format_cards.card_format_of(format_cards.find_card(request.user, name))
        except format_cards.CardNotFound as error:
            raise ApiError(404, str(error)) from None
    given = given_options(fmt, request.GET)
    if given.problems:
        errors = [{"field": field, "message": message} for field, message in given.problems]
        raise ApiError(422, "The options have problems; each is listed in `errors`.", errors=errors)
    shown = format_views.plan_context(fmt, given.options)
    return {
        "options": given.options,
        "calls": shown["call_count"],
        "fewest_calls": shown["fewest_calls"],
        "seconds_per_call": shown["pace"],
        "minutes": shown["minutes"],
        "steps": [{**vars(row), "reads": list(row.reads)} for row in shown["rows"]],
    }
