"""Debate formats over the API: the built-ins and the protocol cards a caller may use, and cards written as
YAML by their owners. The same rules as the admin, the pages and `import_formats` (debates/format_cards.py):
a card with any problem is refused (422) with every problem, each with its line and field."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from ninja import Field, Router, Schema

from api.problems import ApiError
from api.refusals import refusals
from debates import format_cards
from debates.formats import LISTED, Format
from debates.formats.card import CardError
from debates.models import FormatCard

router = Router()


class SeatSpecOut(Schema):
    key: str
    label: str
    role: str
    side: str
    required: bool
    human_allowed: bool = Field(description="A person may take this seat (`true` in `seats`) instead of a persona.")


class OptionSpecOut(Schema):
    name: str
    label: str
    default: int
    minimum: int
    maximum: int


class FormatOut(Schema):
    name: str
    title: str
    description: str
    seats: list[SeatSpecOut]
    options: list[OptionSpecOut]
    card: bool = Field(description="A protocol card (written as YAML) rather than a built-in format.")
    owner: str | None = Field(None, description="A card's owner; none for a built-in or a shipped card.")
    public: bool = Field(True, description="Others may use it: built-ins and shipped cards always.")
    editable: bool = Field(False, description="You may change it (PUT) and delete it.")
    url: str | None = Field(None, description="A card's page: its plan, every call in order.")
    yaml: str | None = Field(None, description="A card's YAML, as its owner wrote it.")


class CardIn(Schema):
    yaml: str = Field(description="The card as YAML: the source of truth (its name, seats, stages, options ...).")
    public: bool | None = Field(None, description="Others may use it (default: no, for a new card).")


def _format_out(fmt: Format) -> dict[str, Any]:
    return {
        "name": fmt.name,
        "title": fmt.title,
        "description": fmt.description,
        "seats": [vars(s) for s in fmt.seat_specs],
        "options": [vars(o) for o in fmt.option_specs],
        "card": False,
    }


def _card_out(request: HttpRequest, card: FormatCard) -> dict[str, Any]:
    return {
        **_format_out(format_cards.card_format_of(card)),
        "card": True,
        "owner": card.owner.get_username() if card.owner_id else None,
        "public": card.public or card.owner_id is None,
        "editable": format_cards.can_edit(request.user, card),
        "url": request.build_absolute_uri(reverse("format_detail", args=[card.name])),
        "yaml": card.yaml,
    }


def _refused(error: CardError) -> ApiError:
    return ApiError(
        422, "The card has problems; each is listed in `errors` with its line.", errors=format_cards.problems_of(error)
    )


def _editable(request: HttpRequest, name: str) -> FormatCard:
    """The card for a change: 404 unless the caller may see it, 403 for a read-only token or another's card."""
    if name in LISTED:
        raise ApiError(403, f"{name!r} is a built-in format; it cannot be changed (write a card of your own).")
    try:
        card = format_cards.find_card(request.user, name)
    except format_cards.CardNotFound as error:
        raise ApiError(404, str(error)) from None
    if not format_cards.can_edit(request.user, card):
        raise ApiError(403, "Only the card's owner can change it.")
    return card


@router.get("/formats", response={200: list[FormatOut], **refusals()}, summary="List debate formats", tags=["formats"])
def list_formats(request: HttpRequest) -> Any:
    """The built-in formats, then the protocol cards you may use (shipped, public, yours): each with its seats
    (what each may hold) and options (with their bounds), what `POST /debates` takes."""
    cards = [_card_out(request, c) for c in format_cards.usable(request.user)]
    return [*(_format_out(f) for f in LISTED.values()), *cards]


@router.get(
    "/formats/{name}", response={200: FormatOut, **refusals(404)}, summary="Get a debate format", tags=["formats"]
)
def show_format(request: HttpRequest, name: str) -> Any:
    if name in LISTED:
        return _format_out(LISTED[name])
    try:
        return _card_out(request, format_cards.find_card(request.user, name))
    except format_cards.CardNotFound as error:
        raise ApiError(404, str(error)) from None


@router.post(
    "/formats", response={201: FormatOut, **refusals(403, 422)}, summary="Write a protocol card", tags=["formats"]
)
def create_card(request: HttpRequest, body: CardIn) -> Any:
    """A new card, yours, from its YAML; refused with every problem (line and field) if it has any."""
    try:
        card = format_cards.save_card(body.yaml, owner=request.user, public=bool(body.public))
    except CardError as error:
        raise _refused(error) from None
    return 201, _card_out(request, card)


@router.put(
    "/formats/{name}",
    response={200: FormatOut, **refusals(403, 404, 422)},
    summary="Change a protocol card",
    tags=["formats"],
)
def change_card(request: HttpRequest, name: str, body: CardIn) -> Any:
    """Its owner replaces its YAML (the name may change with it); debates made from it keep the text they
    were made with."""
    card = _editable(request, name)
    try:
        card = format_cards.save_card(body.yaml, owner=request.user, card=card, public=body.public)
    except CardError as error:
        raise _refused(error) from None
    return _card_out(request, card)


@router.delete(
    "/formats/{name}", response={204: None, **refusals(403, 404)}, summary="Delete a protocol card", tags=["formats"]
)
def delete_card(request: HttpRequest, name: str) -> Any:
    """Its owner (or staff); debates made from it keep their copy and run on."""
    format_cards.delete_card(_editable(request, name))
    return 204, None
