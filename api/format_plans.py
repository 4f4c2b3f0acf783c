"""A format's plan over the API: the format page's (debates/format_views.py) every call in order at the options
given, how many calls that is and how long they take at this site's recent pace. The same `plan_context` and the
same options form as the page (a bad option falls back to the format's defaults, as there); the same rule of which
cards the caller may see (404 for any other)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema

from api.problems import ApiError
from api.refusals import refusals
from debates import format_cards, format_views
from debates.formats import LISTED

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
    options: dict[str, int] = Field(description="The options the plan is for: those given, else the defaults")
    calls: int = Field(description="The LLM calls a debate makes at those options")
    seconds_per_call: float | None = Field(
        description="This site's recent pace, else the embedded model's speed measured on this machine; none before "
        "either"
    )
    minutes: float | None = Field(description="How long the calls take at that pace")
    steps: list[PlanStepOut] = Field(description="A card's every call in order (a built-in format lists none)")


@router.get(
    "/formats/{name}/plan",
    response={200: PlanOut, **refusals(404)},
    summary="A format's plan at some options",
    openapi_extra={
        "parameters": [
            {
                "in": "query",
                "name": "option_<name>",
                "required": False,
                "schema": {"type": "integer"},
                "description": "An option's value, as the format page's form sends it (option_turns=4)",
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
    _form, options = format_views._options(fmt, request.GET)
    shown = format_views.plan_context(fmt, options)
    return {
        "options": options,
        "calls": shown["call_count"],
        "seconds_per_call": shown["pace"],
        "minutes": shown["minutes"],
        "steps": [{**vars(row), "reads": list(row.reads)} for row in shown["rows"]],
    }
