"""Personas and debates over the API: the same forms, services, selectors and sharing rules as the
debate pages (debates/views.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Field, Router, Schema

from api.access import deletable, owned, readable
from api.problems import ApiError
from api.refusals import refusals
from api.schemas import Id, Material
from chaoslm import costs, sharing, spending
from chaoslm.schemas import Input
from debates import privacy, services, transcripts
from debates.formats import DEFAULT_FORMAT, FormatError
from debates.forms import NewDebateForm, no_such_option
from debates.hold import OFFERED as HOLDS
from debates.models import Debate
from debates.selectors import listed_mine, listed_public
from personas.models import Persona

router = Router()


class PersonaOut(Schema):
    id: int
    name: str
    role: str = Field(description="The seat role it is made for: a seat of that role offers it first.")
    model: str


# The new-debate form's bounds (debates/forms.py, the columns of debates/models.py).
Topic = Annotated[str, Field(max_length=Debate._meta.get_field("topic").max_length)]
Key = Annotated[str, Field(max_length=40)]


class DebateIn(Input):
    format: Annotated[str, Field(max_length=Debate._meta.get_field("format").max_length)] = Field(
        DEFAULT_FORMAT, description=f"A format's name (the formats' list names them); {DEFAULT_FORMAT} by default."
    )
    topic: Topic
    premise: Topic = ""
    material: Material = ""
    seats: dict[Key, Id | bool] = Field(
        default_factory=dict,
        max_length=20,
        description="Seat key to a persona id, or `true` to take a human seat yourself.",
    )
    options: dict[Key, int] = Field(default_factory=dict, max_length=20)
    visibility: Literal["private", "unlisted", "public"] = "private"
    show_thinking: bool = Field(True, description="Viewers other than you and staff see the private thinking.")
    audience_poll: bool = Field(
        True,
        description="The audience votes before and after (once the debate is public or unlisted), as the form's "
        "box: `GET /debates/{id}/poll`.",
    )
    hold: int = Field(
        0,
        ge=0,
        le=max(HOLDS),
        description="Minutes to hold the start, so an audience can gather and vote before it: one of the form's "
        f"holds ({', '.join(map(str, HOLDS))}) up to CHAOSLM_HOLD_MAX_MINUTES; 0, no hold.",
    )


class SeatOut(Schema):
    key: str
    name: str
    role: str
    side: str
    human: bool
    model: str
    embedded_model: str | None = Field(
        None,
        description="The embedded model its replies were written by (SmolLM2-135M), as its calls recorded; null "
        "for another model or a person",
    )


class VerdictOut(Schema):
    winner: str
    scores: dict[str, Any]
    premise_upheld: bool | None
    announcement: str
    ranking: list[str] = Field(
        default_factory=list,
        description="A judge's ranking of more than two sides, best first, of those that spoke; [] for any other",
    )
    words: str = Field(
        "", description='What the protocol calls the outcome, where its winning side has a word for it ("Not guilty")'
    )
    unranked: list[str] = Field(
        default_factory=list,
        description="Sides the debate ended before they spoke, in seat order: not placed in the ranking",
    )
    fallback: str | None = Field(
        None, description="Why the verdict is not the judge's own (its verdict JSON stayed invalid); null when it is"
    )

    marks: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="A judge's rubric marks by criterion behind each side's score (the score is their sum), by side "
        'name: {"Affirmative": {"framework": 9, ...}}; {} for a verdict without a rubric',
    )


class DecisionOut(Schema):
    rule: str = Field(description="plurality, majority, unanimity, approval, borda, mean or judge")
    answer: Any = Field(description="The answer decided; null: no decision")
    split: list[list[Any]] = Field(description="Each answer with its votes (points for Borda, the mean for mean)")
    voters: int
    reason: str
    line: str = Field(description="The line the debate's transcript shows")


class EventOut(Schema):
    ordinal: int
    kind: str = Field(description="HEADER, PLAN, THINK, TURN, SCORE, VERDICT, SYSTEM, USER, ERROR, INTERNAL")
    step: str
    label: str = Field(
        description="The step as the format names it (a card's own label, such as negative question 1); empty for "
        "the format's ordinary turns and a message no step asked for (a moderated discussion's, step human)"
    )
    seat: str | None
    speaker: str | None
    visibility: str
    prompt: str | None = Field(None, description="The exact prompt: for the owner and staff only.")
    content: str
    data: dict[str, Any] = Field(
        description="The step's own fields (a score's score and reasoning, a decision's answer ...), and how a reply "
        "was cut: `truncated_from_words` (its words before the word limit cut it), `cut_at_tokens` (the tokens it had "
        "when the model's token limit, max_tokens, cut it off mid-reply)"
    )
    tokens_in: int
    tokens_out: int
    tokens_cached: int = Field(0, description="Of tokens_in, those the provider read from its prompt cache.")
    cost: str | None = Field(
        None, description="The call's cost in US dollars (an exact decimal); null: no call, or an unknown price."
    )
    latency_ms: int
    model: str
    created_at: datetime


class DebateSummary(Schema):
    id: int
    topic: str
    format: str
    status: str
    visibility: str
    owner: str | None
    created_at: datetime
    url: str


class DebateOut(DebateSummary):
    premise: str
    material: str = Field(description="What the debate carries beyond its topic (empty for none).")
    options: dict[str, Any] = Field(
        description="The options it runs at: its format's defaults with those given (the JSON export's `options`)"
    )
    error: str
    written_by_embedded: str | None = Field(
        None,
        description="What the debate's page says when the embedded model (for trying ChaosLM offline) wrote its "
        'replies, all or some: "Written by the embedded SmolLM2-135M model (for trying ChaosLM offline)."; null '
        "when it wrote none",
    )
    is_ending: bool
    show_thinking: bool
    audience_poll: bool = Field(description="Whether its audience votes (`GET /debates/{id}/poll`)")
    starts_at: datetime | None = Field(None, description="Held until then; null for a debate that starts at once")
    share_url: str | None = Field(None, description="The share link: shown to the owner only.")
    seats: list[SeatOut]
    verdict: VerdictOut | None
    decision: DecisionOut | None = Field(None, description="A card's decision over its seats' answers, or null")
    events: list[EventOut]
    cost: dict[str, Any] = Field(
        description="What its calls cost: `usd` (exact decimal), `unknown_price_calls` (calls whose price is unknown, "
        "not in `usd`), `text` (as the page shows it), and `by_persona` (per persona and model)."
    )


class DebatePage(Schema):
    count: int
    page: int
    pages: int
    results: list[DebateSummary]


class DebateChange(Input):
    visibility: Literal["private", "unlisted", "public"] | None = None
    show_thinking: bool | None = None


class SpeakIn(Input):
    text: str = Field(max_length=services.MAX_MESSAGE_CHARS, description="What you say in your seat.")


class ShareLinkOut(Schema):
    share_url: str


def _summary(request: HttpRequest, debate: Debate) -> dict[str, Any]:
    return {
        "id": debate.pk,
        "topic": debate.topic,
        "format": debate.format,
        "status": debate.status,
        "visibility": debate.visibility,
        "owner": debate.owner.get_username() if debate.owner_id else None,
        "created_at": debate.created_at,
        "url": request.build_absolute_uri(reverse("debate_detail", args=[debate.pk])),
    }


def _share_url(request: HttpRequest, debate: Debate) -> str:
    return request.build_absolute_uri(reverse("debate_share", args=[debate.share_token]))


def debate_out(request: HttpRequest, debate: Debate, *, via_share: bool = False) -> dict[str, Any]:
    """The debate as its page (or its share page: `via_share`) shows it to the caller: the JSON export's events under
    the page's privacy rule."""
    data = transcripts.as_dict(debate, access=privacy.access(request.user, debate, via_share=via_share))
    owner = sharing.is_owner(request.user, debate)
    return {
        **data,
        **_summary(request, debate),
        "is_ending": debate.is_ending,
        "show_thinking": debate.show_thinking,
        # The owner's choice (the JSON export's `audience_poll` is the poll's counts instead).
        "audience_poll": debate.audience_poll,
        "starts_at": debate.starts_at,
        "share_url": _share_url(request, debate) if owner else None,
    }


@router.get("/personas", response={200: list[PersonaOut], **refusals()}, summary="List personas", tags=["personas"])
def list_personas(request: HttpRequest, role: str | None = None) -> Any:
    """The personas a seat may take; `role` keeps those made for one seat role (debater, judge, moderator ...)."""
    found = Persona.objects.order_by("name")
    if role:
        found = found.filter(role=role)
    return [{"id": p.pk, "name": p.name, "role": p.role, "model": p.model} for p in found]


@router.get(
    "/personas/{id:persona_id}",
    response={200: PersonaOut, **refusals(404)},
    summary="Get a persona",
    tags=["personas"],
)
def get_persona(request: HttpRequest, persona_id: int) -> Any:
    p = get_object_or_404(Persona, pk=persona_id)
    return {"id": p.pk, "name": p.name, "role": p.role, "model": p.model}


@router.get("/usage", response={200: dict[str, Any], **refusals()}, summary="Your spend this month", tags=["personas"])
def month_usage(request: HttpRequest) -> Any:
    """This calendar month's (UTC) cost of your debates, tournaments, experiments and rooms, per persona and model, as
    `/account/usage/` shows it: `usd` (exact decimal), `unknown_price_calls` (calls whose price is unknown, not in
    `usd`), your `budget_usd` and what is `left_usd` (null: no budget)."""
    return spending.as_json(request.user)


def _form_data(body: DebateIn, form_fields: set[str]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The new-debate form's fields from the JSON body, and the seats and options the format has no field for."""
    data: dict[str, Any] = {
        "format": body.format,
        "topic": body.topic,
        "premise": body.premise,
        "material": body.material,
        "visibility": body.visibility,
    }
    if body.show_thinking:
        data["show_thinking"] = "on"
    if body.audience_poll:
        data["audience_poll"] = "on"
    data["hold"] = str(body.hold)
    unknown = []
    for key, value in body.seats.items():
        if f"seat_{key}" not in form_fields:
            unknown.append({"field": f"seats.{key}", "message": f"The {body.format} format has no seat {key!r}."})
        elif value is True:
            data[f"seat_{key}"] = "on"
        elif value is not False:
            data[f"seat_{key}"] = str(value)
    for name, value in body.options.items():
        if f"option_{name}" not in form_fields:
            unknown.append({"field": f"options.{name}", "message": no_such_option(body.format, name)})
        else:
            data[f"option_{name}"] = str(value)
    return data, unknown


def _field(name: str) -> str:
    if name == "__all__":
        return "body"
    for prefix, group in (("seat_", "seats"), ("option_", "options")):
        if name.startswith(prefix):
            return f"{group}.{name.removeprefix(prefix)}"
    return name


@router.post(
    "/debates",
    response={201: DebateOut, **refusals(402, 403, 422)},
    summary="Create and start a debate",
    tags=["debates"],
)
def create_debate(request: HttpRequest, body: DebateIn) -> Any:
    """The new-debate form's rules and messages: the same validation, the same start limits. Options left out
    take the format's defaults; a seat left out stays empty where the format allows it."""
    blank = NewDebateForm(format_name=body.format, user=request.user)
    fields = set(blank.fields)
    data, unknown = _form_data(body, fields)
    for spec in blank.fmt.option_specs:
        data.setdefault(f"option_{spec.name}", str(spec.default))
    form = NewDebateForm(data, format_name=body.format, user=request.user)
    form.is_valid()
    errors = [
        {"field": _field(name), "message": str(message)}
        for name, messages in form.errors.items()
        for message in messages
    ]
    errors += unknown
    if errors:
        raise ApiError(422, "The debate cannot start; each problem is listed in `errors`.", errors=errors)
    try:
        debate = services.start_debate(request.user, form)
    except costs.OverBudget as error:
        raise ApiError(402, str(error)) from None
    except FormatError as error:
        raise ApiError(422, str(error), errors=[{"field": "body", "message": str(error)}]) from None
    return 201, debate_out(request, debate)


@router.get("/debates", response={200: DebatePage, **refusals(422)}, summary="List debates", tags=["debates"])
def list_debates(request: HttpRequest, scope: Literal["mine", "public"] = "mine", page: int = 1) -> Any:
    """Your own debates (`scope=mine`), or everyone else's public ones (`scope=public`), newest first, 50 a page."""
    found = listed_mine(request.user) if scope == "mine" else listed_public(request.user)
    paginator = Paginator(found.select_related("owner"), 50)
    current = paginator.get_page(page)
    return {
        "count": paginator.count,
        "page": current.number,
        "pages": paginator.num_pages,
        "results": [_summary(request, d) for d in current],
    }


@router.get(
    "/debates/{id:debate_id}", response={200: DebateOut, **refusals(404)}, summary="Get a debate", tags=["debates"]
)
def get_debate(request: HttpRequest, debate_id: int) -> Any:
    """Its status, seats, events (with their kinds) and verdict, as its page shows them to you: the private
    thinking only where the page shows it, the prompts to the owner and staff only."""
    return debate_out(request, readable(Debate, request, debate_id))


@router.patch(
    "/debates/{id:debate_id}",
    response={200: DebateOut, **refusals(403, 404, 422)},
    summary="Change a debate's sharing",
    tags=["debates"],
)
def change_debate(request: HttpRequest, debate_id: int, body: DebateChange) -> Any:
    """Who may see it (`visibility`) and whether its viewers see the private thinking (`show_thinking`)."""
    debate = owned(Debate, request, debate_id)
    if body.visibility is not None:
        sharing.set_visibility(debate, body.visibility)
    if body.show_thinking is not None:
        services.show_thinking(debate, body.show_thinking)
    return debate_out(request, debate)


@router.delete(
    "/debates/{id:debate_id}", response={204: None, **refusals(403, 404)}, summary="Delete a debate", tags=["debates"]
)
def delete_debate(request: HttpRequest, debate_id: int) -> Any:
    """Its owner or staff; a running debate stops first."""
    services.delete_debate(deletable(Debate, request, debate_id))
    return 204, None


@router.post(
    "/debates/{id:debate_id}/end",
    response={202: DebateOut, **refusals(403, 404)},
    summary="End a debate",
    tags=["debates"],
)
def end_debate(request: HttpRequest, debate_id: int) -> Any:
    """Its format brings it to a close (a summary, a verdict) at its next step."""
    debate = services.end(owned(Debate, request, debate_id))
    return 202, debate_out(request, debate)


@router.post(
    "/debates/{id:debate_id}/speak",
    response={201: EventOut, **refusals(403, 404, 409, 422)},
    summary="Speak in your human seat",
    tags=["debates"],
)
def speak(request: HttpRequest, debate_id: int, body: SpeakIn) -> Any:
    """When the debate waits for you (status `waiting`); 409 when it is not your turn."""
    debate = owned(Debate, request, debate_id)
    if debate.status != Debate.Status.WAITING:
        raise ApiError(409, "It is not your turn to speak.")
    try:
        event = services.speak(request.user, debate, body.text)
    except FormatError as error:
        raise ApiError(422, str(error), errors=[{"field": "text", "message": str(error)}]) from None
    row = next(e for e in transcripts.as_dict(debate)["events"] if e["ordinal"] == event.ordinal)
    return 201, row


@router.post(
    "/debates/{id:debate_id}/retry",
    response={202: DebateOut, **refusals(402, 403, 404, 409)},
    summary="Retry a failed or interrupted debate",
    tags=["debates"],
)
def retry(request: HttpRequest, debate_id: int) -> Any:
    debate = owned(Debate, request, debate_id)
    try:
        started = services.retry(request.user, debate)  # limits.LimitReached: a 429 (api/main.py)
    except costs.OverBudget as error:
        raise ApiError(402, str(error)) from None
    if not started:
        raise ApiError(409, f"Only a failed or interrupted debate can be retried; this one is {debate.status}.")
    return 202, debate_out(request, debate)


@router.post(
    "/debates/{id:debate_id}/share-link",
    response={200: ShareLinkOut, **refusals(403, 404)},
    summary="Make a new share link",
    tags=["debates"],
)
def new_share_link(request: HttpRequest, debate_id: int) -> Any:
    """The old link stops working at once, and pages opened through it close."""
    debate = owned(Debate, request, debate_id)
    sharing.reset_share_link(debate)
    return {"share_url": _share_url(request, debate)}


@router.get(
    "/debates/{id:debate_id}/export/{kind}",
    response={200: str, **refusals(404, 422)},
    summary="Export a debate's transcript",
    tags=["debates"],
    openapi_extra={
        "responses": {
            200: {
                "description": "The transcript, as its page shows it to you",
                "content": {
                    "text/markdown": {"schema": {"type": "string"}},
                    "application/json": {"schema": {"type": "object"}},
                },
            }
        }
    },
)
def export(request: HttpRequest, debate_id: int, kind: Literal["md", "json"]) -> HttpResponse:
    """Markdown or JSON, with what the debate's page shows you (debates/privacy.py)."""
    debate = readable(Debate, request, debate_id)
    access = privacy.access(request.user, debate)
    if kind == "md":
        return HttpResponse(transcripts.as_markdown(debate, access=access), content_type="text/markdown; charset=utf-8")
    return HttpResponse(transcripts.as_json(debate, access=access), content_type="application/json")
