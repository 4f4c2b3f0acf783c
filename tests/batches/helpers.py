"""Shared by the tests of the kinds of batch: personas on test servers, judges scripted by rules, running a tournament
to the end, what a batch page's socket lets in and sends first."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db.models import QuerySet
from django.urls import URLPattern

from chaoslm.runner import inline
from debates.models import Event
from personas.models import Persona, Provider
from tournaments import services
from tournaments.models import Tournament
from tournaments.questions import QuestionSpec


def provider_for(server, name: str) -> Provider:
    return Provider.objects.create(name=name, base_url=server.url, default_model="test-model", json_mode="json_object")


def debater(name: str, provider: Provider | None = None) -> Persona:
    return Persona.objects.get_or_create(
        name=name, defaults={"role": "debater", "personality": f"{name} argues plainly.", "provider": provider}
    )[0]


def judge(name: str, provider: Provider | None = None) -> Persona:
    defaults = {"role": "judge", "personality": f"{name} judges.", "judging_criteria": "Weigh the logic."}
    return Persona.objects.get_or_create(name=name, defaults={**defaults, "provider": provider})[0]


def confirm_rule(first: str, second: str, reply: str) -> dict[str, str]:
    """The judge's answer to the verdict's "who won?" question when `first` argued FOR and `second` AGAINST."""
    return {"match": f"nothing else: '{first}' or '{second}'\\.", "reply": reply}


def always_for(names: Iterable[str]) -> list[dict[str, str]]:
    names = list(names)
    return [confirm_rule(a, b, a) for a in names for b in names if a != b]


def always_against(names: Iterable[str]) -> list[dict[str, str]]:
    names = list(names)
    return [confirm_rule(a, b, b) for a in names for b in names if a != b]


def favouring(favourite: str, names: Iterable[str]) -> list[dict[str, str]]:
    """Names `favourite` whenever it debates; otherwise the FOR side."""
    names = list(names)
    return [confirm_rule(a, b, favourite if favourite in (a, b) else a) for a in names for b in names if a != b]


def questions(count: int) -> list[QuestionSpec]:
    return [
        QuestionSpec(f"Question {i}?", f"Premise {i} holds", "for" if i % 2 == 0 else "against") for i in range(count)
    ]


def run_to_end(tournament: Tournament, timeout: float = 120) -> Tournament:
    """Start the tournament on the inline runner and wait until it settles and every debate has stopped."""
    services.TOURNAMENT.start(tournament)
    deadline = time.monotonic() + timeout
    while not services.TOURNAMENT.is_settled(tournament.pk):
        assert time.monotonic() < deadline, "the tournament did not finish in time"
        time.sleep(0.1)
    inline.wait_idle()
    tournament.refresh_from_db()
    return tournament


def name_each_other(turns: QuerySet[Event], names: tuple[str, str]) -> None:
    """Rewrite the two debaters' `turns` so that each names itself, the other (in capitals, in lower case, with a
    possessive) and its model: the ways a redaction must catch a name in an arena's transcript."""
    first, second = names
    for event in turns:
        me, other = (first, second) if event.seat.name == first else (second, first)
        short = other.split()[0]
        event.content = f"I am {me}. {short.upper()}'s case fails; {short.lower()} forgets test-model's limits."
        event.save(card=False)


def first_push(routes: list[URLPattern], path: str) -> tuple[bool, str]:
    """Whether an anonymous socket at `path` (one of `routes`) is let in, and the first push it gets (its page's live
    parts)."""

    async def attempt() -> tuple[bool, str]:
        communicator = WebsocketCommunicator(AuthMiddlewareStack(URLRouter(routes)), path)
        connected, _ = await communicator.connect()
        first = await communicator.receive_from() if connected else ""
        await communicator.disconnect()
        return connected, first

    return asyncio.run(attempt())
