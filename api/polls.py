"""The debate page's audience poll over the API (audience/votes.py, audience/poll_views.py), a held debate's "Start
now", and the new-debate form's preview of a persona's prompt.

The poll is the page's box: the same `votes.box` (no tally of a vote before voting in it or before it closes, the
result once both closed), the same `votes.cast_vote` with its refusals and messages, the same per-address limit
(`poll_views.vote_wait`, shared with the pages and both arenas) and the same owner rule for closing. The caller
votes as their account (`poll_views.voter_to_vote`), as they would signed in on the page: one vote per account and
phase, whatever the address or the token."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from api.access import owned, readable
from api.debates import DebateOut, debate_out
from api.problems import ApiError
from api.refusals import refusals
from audience import poll_views, votes
from debates import services
from debates.models import Debate
from personas.models import Persona

router = Router(tags=["debates"])


class PollOptionOut(Schema):
    key: str
    label: str
    before: int | None = Field(description="Votes before the debate: shown once you voted in it or it closed.")
    before_share: float | None
    after: int | None = Field(description="Votes after the debate: shown once you voted in it or it closed.")
    after_share: float | None
    swing: float | None = Field(description="After share minus before share, in points: once both are shown.")


class PollOut(Schema):
    kind: str = Field(description="`oxford` (before and after) or `peoples_choice` (one vote after, who argued best)")
    open_phase: str = Field(description="`before`, `after`, or empty while no vote is open")
    state: str = Field(description="The open vote's name, `waiting` (between the two) or `closed`")
    closes_at: datetime | None
    my_choice: str | None = Field(description="Your vote in the open vote, if you cast one")
    options: list[PollOptionOut]
    final: bool = Field(description="Both votes have closed: the result is in")
    winner: str | None = Field(description="The audience's pick (the larger gain, or the most votes): once final")
    judge_choice: str | None = Field(description="The option the judge's verdict names, if it names one")
    agrees_with_judge: bool | None
    can_close: bool = Field(description="You may close the vote after the debate now (its owner, while it is open)")


class VoteIn(Schema):
    phase: str = Field(max_length=10, description="`before` or `after`: the open vote")
    choice: str = Field(max_length=30, description="An option's `key`")


class PromptOut(Schema):
    persona: int
    role: str
    prompt: str = Field(description="The exact system prompt the persona gets in a seat of that role")


def poll_out(request: HttpRequest, debate: Debate, *, via_share: bool = False) -> dict[str, Any]:
    """The poll box as its page (or its share page) draws it for the caller (`poll_views.box_context`); 404 for a
    debate without one."""
    box = poll_views.box_context(request, debate, via_share=via_share)
    if box is None:
        raise ApiError(404, "This debate has no audience vote.")
    poll = box["poll"]
    return {
        "kind": "peoples_choice" if poll.peoples else "oxford",
        "open_phase": box["open_phase"],
        "state": box["state"],
        "closes_at": box["closes_at"],
        "my_choice": box["my_choice"],
        "options": [{name: row[name] for name in PollOptionOut.model_fields} for row in box["rows"]],
        "final": box["final"],
        "winner": poll.winner(box["result"]) if box["final"] else None,
        "judge_choice": poll.judge_choice,
        "agrees_with_judge": box["agrees"],
        "can_close": bool(box["close_url"]),
    }


@router.get(
    "/debates/{id:debate_id}/poll",
    response={200: PollOut, **refusals(404)},
    summary="See a debate's audience poll",
)
def get_poll(request: HttpRequest, debate_id: int) -> Any:
    """The page's poll box: the open vote, your vote in it, and each vote's tally only once you voted in it or it
    closed (no herding); the result once both closed. 404 for a debate without a poll (a private one has none)."""
    return poll_out(request, readable(Debate, request, debate_id))


@router.post(
    "/debates/{id:debate_id}/poll/vote",
    response={200: PollOut, **refusals(400, 403, 404, 409)},
    summary="Vote in a debate's audience poll",
)
def vote(request: HttpRequest, debate_id: int, body: VoteIn) -> Any:
    """Your vote in the open vote (`phase`), as your account: voting again while it is open changes it. Refused
    with the page's message, nothing counted: a vote not open (409), an option or phase that is not one (400,
    404), past the per-address limit (429, with Retry-After)."""
    return cast_vote(request, readable(Debate, request, debate_id), body)


def cast_vote(request: HttpRequest, debate: Debate, body: VoteIn, *, via_share: bool = False) -> dict[str, Any]:
    """The caller's vote in the debate's poll, as the page's (at its own address or its share link) counts it."""
    wait = poll_views.vote_wait(request)
    if wait is not None:
        raise ApiError(429, poll_views.too_many_votes(wait), headers={"Retry-After": str(wait)})
    voter, _cookie = poll_views.voter_to_vote(request)
    try:
        votes.cast_vote(debate, body.phase, voter, body.choice)
    except votes.PollError as error:
        raise ApiError(error.status, str(error)) from None
    return poll_out(request, debate, via_share=via_share)


@router.post(
    "/debates/{id:debate_id}/poll/close",
    response={200: PollOut, **refusals(403, 404, 409)},
    summary="Close the vote after a debate now",
)
def close(request: HttpRequest, debate_id: int) -> Any:
    """The owner's "Close the vote now": the result shows on every page. 409 unless the vote after is open."""
    debate = owned(Debate, request, debate_id)
    try:
        votes.close_after_vote(debate)
    except votes.PollError as error:
        raise ApiError(error.status, str(error)) from None
    return poll_out(request, debate)


@router.post(
    "/debates/{id:debate_id}/start-now",
    response={202: DebateOut, **refusals(403, 404, 409)},
    summary="Start a held debate now",
)
def start_now(request: HttpRequest, debate_id: int) -> Any:
    """A debate held before its start (for its audience's vote before it) starts at once; 409 when it was not
    held."""
    debate = owned(Debate, request, debate_id)
    if not services.start_now(debate):
        raise ApiError(409, "The debate was not held: it has started already.")
    debate.refresh_from_db()
    return 202, debate_out(request, debate)


@router.get(
    "/personas/{id:persona_id}/prompt",
    response={200: PromptOut, **refusals(404, 422)},
    summary="Preview a persona's system prompt",
    tags=["personas"],
)
def persona_prompt(request: HttpRequest, persona_id: int, role: str | None = None) -> Any:
    """The exact system prompt the persona gets in a seat of `role` (its own role when left out): the new-debate
    form's preview under each seat."""
    persona = get_object_or_404(Persona, pk=persona_id)
    if role is not None and len(role) > 50:
        raise ApiError(422, "A role is at most 50 characters.", errors=[{"field": "role", "message": "Too long."}])
    seat_role = role or persona.role
    return {"persona": persona.pk, "role": seat_role, "prompt": persona.spec().system_prompt(seat_role)}
