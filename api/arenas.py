"""The two arenas over the API (audience/arena.py): a random blind debate the caller has not voted on, one debate
(who was who only once the caller voted on it), and the vote, which is final.

The same `Arena` as the pages (audience/arena_views.py): the same debates served, the same redacted text, the same
refusals and messages (404 not in the arena, 400 not a choice, 409 a second vote that differs: the first revealed
who was who), the same per-address limit shared with the polls (`poll_views.vote_wait`). The caller votes as their
account (`poll_views.voter_to_vote`), as on the page signed in: a vote cast on the page and over the API by one
account is one voter's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema

from api.problems import ApiError
from api.refusals import refusals
from audience import poll_views
from audience.arena import Arena
from audience.votes import PollError
from experiments.arena import ARENA as EVIDENCE_ARENA
from tournaments.arena import ARENA as MATCH_ARENA

router = Router(tags=["arenas"])


class MatchTurnOut(Schema):
    label: str = Field(description="`Debater 1` (the FOR side) or `Debater 2`")
    side: str
    step: str
    html: str = Field(description="The redacted statement, as sanitized HTML")


class RevealOut(Schema):
    names: list[str] = Field(description="Who the two debaters were, in their labels' order")
    models: list[str]


class MatchOut(Schema):
    id: int
    topic: str
    premise: str
    complete: bool = Field(description="`false`: a name may remain; a vote on it is kept but not counted")
    turns: list[MatchTurnOut]
    my_vote: str | None = Field(description="Your vote (`1`, `2`, `tie`), final once cast")
    reveal: RevealOut | None = Field(description="Who was who: only once you voted on it")


class EvidenceTurnOut(Schema):
    label: str = Field(description="`Debater A` or `Debater B`")
    letter: str = Field(description="The answer it argued for")
    round: int
    html: str = Field(description="The redacted speech, its quotes marked, as sanitized HTML")


class EvidenceRevealOut(RevealOut):
    correct: str = Field(description="The correct answer's letter")


class EvidenceOut(Schema):
    id: int
    question: str
    answers: list[str] = Field(description="Answers A and B")
    complete: bool = Field(description="`false`: a name may remain; an answer on it is kept but not counted")
    turns: list[EvidenceTurnOut]
    my_answer: str | None = Field(description="Your answer (`A` or `B`), final once given")
    reveal: EvidenceRevealOut | None = Field(description="The correct answer and who argued what: once you answered")


class NextMatchOut(Schema):
    match: MatchOut | None = Field(description="A random match you have not voted on; none when none is left")
    message: str = Field(description="The page's words when none is left; else empty")


class NextEvidenceOut(Schema):
    debate: EvidenceOut | None = Field(description="A random debate you have not answered; none when none is left")
    message: str = Field(description="The page's words when none is left; else empty")


class VoteIn(Schema):
    choice: str = Field(max_length=10, description="Matches: `1`, `2` or `tie`; evidence debates: `A` or `B`")


def _match(seen: Any, mine: Any) -> dict[str, Any]:
    return {
        "id": seen.match.pk,
        "topic": seen.topic,
        "premise": seen.premise,
        "complete": seen.complete,
        "turns": [vars(turn) | {"html": str(turn.html)} for turn in seen.turns],
        "my_vote": mine.choice if mine else None,
        "reveal": {"names": list(seen.names), "models": list(seen.models)} if mine else None,
    }


def _evidence(seen: Any, mine: Any) -> dict[str, Any]:
    return {
        "id": seen.run.pk,
        "question": seen.question,
        "answers": list(seen.answers),
        "complete": seen.complete,
        "turns": [vars(turn) | {"html": str(turn.html)} for turn in seen.turns],
        "my_answer": mine.choice if mine else None,
        "reveal": {"names": list(seen.names), "models": list(seen.models), "correct": seen.correct} if mine else None,
    }


def add_arena(
    arena: Arena[Any],
    at: str,
    noun: str,
    out: type[Schema],
    next_out: type[Schema],
    field: str,
    describe: Callable[[Any, Any], dict[str, Any]],
    messages: tuple[str, str],
) -> None:
    """One arena's operations under `/arena/{at}`: `describe(seen, vote)` is what the caller reads of a debate,
    `field` the next page's key, `messages` the page's words when the caller has voted on every debate and when the
    arena has none."""
    done, empty = messages

    def shown(request: HttpRequest, item: Any) -> dict[str, Any]:
        return describe(arena.seen(item), arena.vote_of(item, poll_views.viewer(request)))

    @router.get(
        f"/arena/{at}/next",
        response={200: next_out, **refusals()},
        summary=f"A blind {noun} to vote on",
        operation_id=f"arena_{at}_next",
    )
    def random_item(request: HttpRequest) -> Any:
        """Drawn at random among those you have not voted on, blind: names and models removed."""
        item = arena.pick(poll_views.viewer(request))
        if item is None:
            return {field: None, "message": done if arena.items().exists() else empty}
        return {field: shown(request, item), "message": ""}

    @router.get(
        f"/arena/{at}/{{id:item_id}}",
        response={200: out, **refusals(404)},
        summary=f"One {noun} in the arena",
        operation_id=f"arena_{at}_get",
    )
    def one(request: HttpRequest, item_id: int) -> Any:
        """Blind, unless you voted on it: then with who was who."""
        try:
            return shown(request, arena.in_arena(item_id))
        except PollError as error:
            raise ApiError(error.status, str(error)) from None

    @router.post(
        f"/arena/{at}/{{id:item_id}}/vote",
        response={200: out, **refusals(400, 403, 404, 409)},
        summary=f"Vote on a {noun} in the arena",
        operation_id=f"arena_{at}_vote",
    )
    def cast(request: HttpRequest, item_id: int, body: VoteIn) -> Any:
        """Your vote, counted once and final: the answer reveals who was who, so another choice after it is
        refused (409) and changes nothing; the same vote again is the one already counted."""
        wait = poll_views.vote_wait(request)
        if wait is not None:
            raise ApiError(429, poll_views.too_many_votes(wait), headers={"Retry-After": str(wait)})
        try:
            item = arena.in_arena(item_id)
            voter, _cookie = poll_views.voter_to_vote(request)
            arena.cast(item, voter, body.choice)
        except PollError as error:
            raise ApiError(error.status, str(error)) from None
        return shown(request, item)


add_arena(
    MATCH_ARENA,
    "matches",
    "match",
    MatchOut,
    NextMatchOut,
    "match",
    _match,
    (
        "You have voted on every match in the arena. Come back when more have finished.",
        "No match is in the arena yet: a tournament's owner puts its finished matches there.",
    ),
)
add_arena(
    EVIDENCE_ARENA,
    "evidence",
    "evidence debate",
    EvidenceOut,
    NextEvidenceOut,
    "debate",
    _evidence,
    (
        "You have answered every debate in the arena. Come back when more have finished.",
        "No evidence debate is in the arena yet: an experiment's owner puts its finished debates there.",
    ),
)
