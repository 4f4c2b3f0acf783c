"""The arena: blind votes on finished matches of the tournaments whose owners opted in (`Tournament.arena`).

A voter is served a random finished match they have not voted on, as its debaters' public turns only (no
moderator, no judge, no score), with the debaters called "Debater 1" (the match's FOR side) and "Debater 2"
(AGAINST) and every name of theirs, and their models' names, removed from every text shown, the topic
included (debates/redaction.py). They pick 1, 2 or a tie, and only then are told who was who. The rules of
serving and voting are every arena's (audience/arena.py): one vote per match and voter, final once cast; a
vote on a transcript whose redaction was incomplete is kept, marked `excluded`, and left out of the report's
human figures (tournaments/human.py), which say how many were.

The arena takes matches of two sides only. A match of a format that ranks more teams (British Parliamentary's
four) is never served: a vote picks one of two debaters, and a pick between two of four teams would be a partial
ranking that the human figures (each vote a FOR or AGAINST result against the judges' verdicts) do not count.
Asked for by its address, it is refused with a message that says so; the tournament's page says so too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.cache import cache
from django.db.models import Count, Max, QuerySet

from audience.arena import Arena
from audience.votes import PollError
from batches.arena import identity
from chaoslm.rendering import markdown_to_html
from debates import redaction
from debates.models import Debate, Event
from tournaments import results
from tournaments.models import ArenaVote, Match, Tournament

# The human figures' statistics (tournaments/human.py, batches/stats.py: frozen dataclasses, each built at import)
# load at a process's first report, not with every command.
if TYPE_CHECKING:
    from tournaments import human

LABELS = ("Debater 1", "Debater 2")
RANKED = (
    "That match ranks more than two teams, and the arena takes matches of two sides only (a vote picks one of two "
    "debaters); nothing was counted."
)
RELATED = ("question", "debate", "debater_for__persona", "debater_against__persona")


@dataclass(frozen=True)
class Turn:
    label: str  # "Debater 1" or "Debater 2"
    side: str  # the seat's side in its format: for, pro, affirmative...
    step: str  # the protocol step: opening, rebuttal...
    html: str  # the redacted text, as sanitized Markdown


@dataclass(frozen=True)
class Seen:
    """A match as a blind voter sees it, and who was who (shown only after their vote)."""

    match: Match
    topic: str
    premise: str
    turns: tuple[Turn, ...]
    problems: tuple[str, ...]  # why the redaction is incomplete (empty: complete)
    names: tuple[str, str]  # Debater 1's and Debater 2's names
    models: tuple[str, str]  # the models they ran on

    @property
    def complete(self) -> bool:
        return not self.problems


def matches() -> QuerySet[Match]:
    """Every match in the arena: finished, of two sides (not a ranking of teams), of a tournament whose owner opted
    in."""
    return Match.objects.filter(tournament__arena=True, debate__status=Debate.Status.COMPLETED, sides=[])


def seen(match: Match) -> Seen:
    """What a blind voter reads of the match, redacted, and who was who."""
    debate = match.debate
    assert debate is not None
    seats = {s.pk: s for s in debate.seats.select_related("persona__provider").filter(side__gt="")}
    # Debater 1 is the side arguing FOR in the match's format (the match's debater_for); the other is AGAINST.
    fmt = debate.fmt
    side = next((s for s in fmt.sides if s.stance == "for"), fmt.sides[0] if fmt.sides else None)
    for_seats = set(side.seats) if side else set()
    label = {pk: LABELS[0] if seat.key in for_seats else LABELS[1] for pk, seat in seats.items()}
    events = list(
        debate.events.filter(kind=Event.Kind.TURN, visibility=Event.Visibility.PUBLIC, seat_id__in=list(seats))
        .order_by("ordinal")
        .values_list("seat_id", "step", "content", "model")
    )
    entrants = {LABELS[0]: match.debater_for, LABELS[1]: match.debater_against}
    debaters = []
    models: dict[str, str] = {}
    for text in LABELS:
        names, models[text] = identity(entrants[text], [s for s in seats.values() if label[s.pk] == text])
        debaters.append((text, names))
    used = {model for *_, model in events if model}
    texts = [match.question.topic, match.question.premise, *(content for _, _, content, _ in events)]
    result = redaction.redact(texts, debaters, sorted(used | {m for m in models.values() if m}))
    topic, premise, *contents = result.texts
    turns = tuple(
        Turn(label=label[seat_id], side=seats[seat_id].side, step=step, html=markdown_to_html(content))
        for (seat_id, step, _, _), content in zip(events, contents, strict=True)
    )
    model_of = {text: models.get(text, "") for text in LABELS}
    for seat_id, *_, model in events:
        if model:
            model_of[label[seat_id]] = model
    return Seen(
        match=match,
        topic=topic,
        premise=premise,
        turns=turns,
        problems=result.problems,
        names=(match.debater_for.name, match.debater_against.name),
        models=(model_of[LABELS[0]], model_of[LABELS[1]]),
    )


def left_out(tournament: Tournament) -> str:
    """What the tournament's page says of its matches the arena never serves (those ranking more than two teams)."""
    ranking = [f.title for f in map(tournament.format_of, tournament.formats) if f.ranks_teams()]
    if not ranking:
        return ""
    return (
        f"The arena takes matches of two sides only: its {' and '.join(ranking)} matches, which rank more teams, "
        "stay out of it."
    )


class MatchArena(Arena[Match]):
    vote_model = ArenaVote
    item = "match"
    related = RELATED
    not_in_arena = "That match is not in the arena (its tournament may have left it); nothing was counted."
    bad_choice = "Pick Debater 1, Debater 2 or a tie; nothing was counted."
    final = "Your vote on this match is final: you have seen who was who, so it cannot change; nothing was changed."
    opted_in = "Its finished matches are in the arena; their votes will show in the report."
    opted_out = "Its matches left the arena; the votes already cast stay in the report."

    def items(self) -> QuerySet[Match]:
        return matches()

    def in_arena(self, item_id: int | None) -> Match:
        if item_id and Match.objects.filter(pk=item_id).exclude(sides=[]).exists():
            raise PollError(RANKED, 404)
        return super().in_arena(item_id)

    def seen(self, item: Match) -> Seen:
        return seen(item)


ARENA = MatchArena()


def votes(tournament: Tournament) -> list[human.Vote]:
    """Every arena vote on the tournament's matches, excluded ones included (they are counted as such). One query."""
    from tournaments import human

    side_of = {ArenaVote.Choice.FIRST: "for", ArenaVote.Choice.SECOND: "against", ArenaVote.Choice.TIE: human.TIE}
    rows = ArenaVote.objects.filter(match__tournament=tournament, match__debate__isnull=False).values_list(
        "match__debate_id", "voter", "choice", "excluded", "match__debater_for__name", "match__debater_against__name"
    )
    return [
        human.Vote(match=debate, voter=voter, choice=side_of[choice], debater_for=a, debater_against=b, excluded=ex)
        for debate, voter, choice, ex, a, b in rows
    ]


def human_report(tournament: Tournament) -> human.HumanReport:
    """The report's human figures, cached until the next vote or verdict."""
    cast = ArenaVote.objects.filter(match__tournament=tournament).aggregate(n=Count("id"), at=Max("updated_at"))
    judged = Debate.objects.filter(
        tournament_judgment__match__tournament=tournament, status=Debate.Status.COMPLETED
    ).aggregate(n=Count("id"), at=Max("finished_at"))
    stamp = ":".join(f"{part['n']}:{part['at'].timestamp() if part['at'] else 0}" for part in (cast, judged))
    key = f"tournament-human:{tournament.pk}:{stamp}"
    found = cache.get(key)
    if found is None:
        from tournaments import human

        debaters, judges = results.entrant_names(tournament)
        found = human.build(votes(tournament), results.verdicts(tournament), debaters, judges)
        cache.set(key, found, 600)
    return found
