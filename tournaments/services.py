"""Creating tournaments, and the tournament kind of batch (`TOURNAMENT`): one pass, the runner loop, the Celery tick
chain, the sweep and the owner's actions are batches/kinds.py's, shared with experiments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from batches import schedule
from batches.checks import (
    BatchError,
    Checks,
    Contestant,
    Rules,
    check,
    check_budget,
    cost_estimate,
    given,
    named,
    save_snapshots,
)
from batches.kinds import BatchKind
from chaoslm import costs, live
from chaoslm.sharing import Visibility
from debates import estimates, format_cards
from debates.format_cards import Resolved
from debates.formats import Format, get_format
from debates.models import Debate
from debates.replay import create_replay
from debates.setup import SeatChoice, create_debate
from tournaments import broadcast, design, state
from tournaments.models import Entrant, Judgment, Match, Question, Tournament
from tournaments.questions import QuestionSpec

MAX_DEBATERS = 20
MAX_JUDGES = 10
MAX_REPEATS = 10
MAX_DEBATES = 20_000


class TournamentError(BatchError):
    """A tournament that cannot be made as asked; the message is for the user."""


RULES = Rules(
    noun="A tournament", min_debaters=2, max_debaters=MAX_DEBATERS, max_judges=MAX_JUDGES, error=TournamentError
)


def offered_formats(owner: Any) -> dict[str, Resolved]:
    """What `owner`'s tournament may run, by name: the built-in formats a tournament runs, then the protocol cards
    they may use that have two sides (each with the YAML its matches snapshot)."""
    offered = {name: Resolved(get_format(name)) for name in design.formats()}
    for card in format_cards.usable(owner):
        fmt = format_cards.card_format_of(card)
        if design.runs(fmt) and card.name not in offered:
            offered[card.name] = Resolved(fmt, card.yaml)
    return offered


def needs_moderator(fmt: Format) -> bool:
    """Whether the format has a moderator's seat a tournament must fill."""
    return any(s.role == "moderator" and s.required for s in fmt.seat_specs)


def unfilled_seats(fmt: Format) -> list[Any]:
    """The format's required seats a tournament has no one for (`_seats` fills a side's seats with its entrant, the
    judge seats with its judges and a moderator's with its moderator): its matches could not run."""
    sided = {key for side in fmt.sides for key in side.seats}
    return [
        s
        for s in fmt.seat_specs
        if s.required
        and s.key not in sided
        and s.key != fmt.judge_seat
        and s.key not in fmt.referee_seats
        and s.role not in ("judge", "moderator")
    ]


@dataclass(frozen=True)
class Checked:
    """A tournament as `check_tournament` found it: its name and options as stored, its size, and the YAML of each
    card among its formats, by name."""

    name: str
    options: dict[str, Any]
    size: design.Estimate
    cards: dict[str, str]
    cost: costs.CostRange  # what its calls would cost, low to high, as the new form says
    time: estimates.Duration  # how long its calls take, as the new form says


def check_tournament(
    *,
    name: str,
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    questions: Sequence[QuestionSpec],
    options: dict[str, Any] | None = None,
    sides: str = Tournament.Sides.BOTH,
    repeats: int = 1,
    concurrency: int = 8,
    owner: Any = None,
    visibility: str = Visibility.PRIVATE,
    formats: Sequence[str] = (design.DEFAULT,),
    moderator: Contestant | None = None,
    arena: bool = False,
) -> Checked:
    """The checks `create_tournament` makes before anything is saved (its arguments; the arena changes none), and
    the size they find: what the API's estimate answers. TournamentError with every problem at once."""
    found = Checks(TournamentError)
    name = named(found, RULES, name)
    options = given(options)
    offered = offered_formats(owner)
    unknown = [f for f in formats if f not in offered]
    if not formats or unknown or len(set(formats)) != len(formats):
        found.fail(f"A tournament's formats are one or more of {', '.join(offered)}, each once.", "format")
    chosen = [offered[f].fmt for f in dict.fromkeys(formats) if f in offered]
    # Each format takes the options it has (a word limit is everyone's).
    known = {o.name: o for f in chosen for o in f.option_specs}
    check(found, RULES, debaters, judges, options, known, concurrency, visibility)
    moderated = [f.name for f in chosen if needs_moderator(f)]
    if bool(moderated) != (moderator is not None):
        named_ = " or ".join(moderated or [name for name, r in offered.items() if needs_moderator(r.fmt)])
        found.fail(
            f"A {named_} debate needs a moderator; give one only when a {named_} debate is run.", "moderator", "format"
        )
    if moderator is not None and moderator.spec.name in {c.spec.name for c in (*debaters, *judges)}:
        found.fail(
            f"{moderator.spec.name} cannot both moderate and debate or judge.", "moderator", "debaters", "judges"
        )
    if not questions:
        found.fail("A tournament needs at least one question.", "questions")
    if sides not in Tournament.Sides.values:
        found.fail("Sides must be 'both' or 'once'.", "sides")
    if not 1 <= repeats <= MAX_REPEATS:
        found.fail(f"Repeats must be between 1 and {MAX_REPEATS}.", "repeats")
    for fmt in chosen:
        unfilled = unfilled_seats(fmt)
        if unfilled:
            found.fail(
                f"A {fmt.name} debate has a required seat a tournament cannot fill (it argues no side and is no "
                f"judge's or moderator's): {', '.join(f'{s.label} ({s.key})' for s in unfilled)}.",
                "format",
            )
        silent = design.silent_side(fmt, options)
        if silent:
            found.fail(silent, "options", "format")
        if fmt.ranks_teams() and (len(judges) != 1 or repeats != 1):
            found.fail(
                f"A {fmt.name} debate is judged by its one judge inside it: give one judge and one repeat.",
                "judges",
                "repeats",
                "format",
            )
        if design.refereed(fmt):
            seats = [s for s in fmt.seat_specs if s.key in fmt.referee_seats]
            fewest = sum(s.required for s in seats)
            if not fewest <= len(judges) <= len(seats) or repeats != 1:
                count = f"{fewest} to {len(seats)}" if fewest < len(seats) else str(fewest)
                found.fail(
                    f"A {fmt.name} debate is decided by its referees inside it, one judge a referee's seat: give "
                    f"{count} judges and one repeat.",
                    "judges",
                    "repeats",
                    "format",
                )
        elif len(judges) < 1 + len(bench := [s.label for s in bench_seats(fmt) if s.required]):
            found.fail(
                f"A {fmt.name} debate seats {1 + len(bench)} judges (its own and {', '.join(bench)}): give as many.",
                "judges",
                "format",
            )
        if len(debaters) < len(fmt.sides):
            found.fail(
                f"A {fmt.name} debate seats {len(fmt.sides)} debaters, one a side: give as many.", "debaters", "format"
            )
    found.done()
    # Its size is only known once the rest holds.
    size = design.estimate(len(questions), len(debaters), len(judges), sides, repeats, options, chosen)
    if size.debates > MAX_DEBATES:
        raise TournamentError(f"That is {size.debates} debates; a tournament runs at most {MAX_DEBATES}.")
    cards = {f: offered[f].card_source for f in formats if offered[f].card_source}
    cost = cost_estimate(size.calls, [*debaters, *judges, *([moderator] if moderator else [])])
    time = estimates.duration(size.calls, size.calls, size.debates, concurrency)
    return Checked(name, options, size, cards, cost, time)


def create_tournament(
    *,
    name: str,
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    questions: Sequence[QuestionSpec],
    options: dict[str, Any] | None = None,
    sides: str = Tournament.Sides.BOTH,
    repeats: int = 1,
    concurrency: int = 8,
    owner: Any = None,
    visibility: str = Visibility.PRIVATE,
    formats: Sequence[str] = (design.DEFAULT,),
    moderator: Contestant | None = None,
    arena: bool = False,
) -> Tournament:
    """Store a tournament with all its matches and judgments (nothing runs yet: see `TOURNAMENT.start`): each
    pairing debates once in each of its `formats` (`offered_formats(owner)`: built-ins and usable cards, by name),
    the formats one after another; a format with a moderator's seat (classic) is led by `moderator`."""
    formats = list(formats)
    checked = check_tournament(
        name=name,
        debaters=debaters,
        judges=judges,
        questions=questions,
        options=options,
        sides=sides,
        repeats=repeats,
        concurrency=concurrency,
        owner=owner,
        visibility=visibility,
        formats=formats,
        moderator=moderator,
    )
    name, options, cards = checked.name, checked.options, checked.cards
    check_budget(owner, checked.cost)
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name,
            owner=owner,
            format=",".join(formats),
            cards=cards,
            options=options,
            sides=sides,
            repeats=repeats,
            concurrency=concurrency,
            visibility=visibility,
            arena=arena,
        )
        entrants = save_snapshots(Entrant, debaters, judges, [moderator] if moderator else [], tournament=tournament)
        saved_questions = Question.objects.bulk_create(
            [
                Question(tournament=tournament, index=i, topic=q.topic, premise=q.premise, correct=q.correct)
                for i, q in enumerate(questions)
            ]
        )
        seated = entrants[Entrant.Role.DEBATER]
        made = []
        for format_name in formats:
            teams = len(tournament.format_of(format_name).sides)
            if teams > 2:
                # One entrant a side, the sides in the format's order: debater_for and _against are the first two.
                made += [
                    (format_name, s.question, [seated[i] for i in s.debaters], True)
                    for s in design.seatings(len(questions), len(debaters), teams, sides)
                ]
            else:
                made += [
                    (format_name, p.question, [seated[p.debater_for], seated[p.debater_against]], False)
                    for p in design.pairings(len(questions), len(debaters), sides)
                ]
        matches = Match.objects.bulk_create(
            [
                Match(
                    tournament=tournament,
                    order=order,
                    format=format_name,
                    question=saved_questions[question],
                    debater_for=people[0],
                    debater_against=people[1],
                    sides=[e.pk for e in people] if ranked else [],
                )
                for order, (format_name, question, people, ranked) in enumerate(made)
            ]
        )
        # A debate its referees decide is one judgment, its first referee's (the panel's verdict is the match's).
        refereed = {name for name in formats if design.refereed(tournament.format_of(name))}
        Judgment.objects.bulk_create(
            [
                Judgment(
                    match=match,
                    judge=judge,
                    repeat=repeat,
                    in_debate=(
                        index == 0 and repeat == 0 and design.judged_in_debate(tournament.format_of(match.format))
                    ),
                )
                for match in matches
                for index, judge in enumerate(
                    entrants[Entrant.Role.JUDGE][:1] if match.format in refereed else entrants[Entrant.Role.JUDGE]
                )
                for repeat in range(repeats)
            ],
            batch_size=2000,
        )
    return tournament


# -- running it (the machinery is batches/kinds.py, shared with experiments) ------------------------
def _choice(entrant: Entrant) -> SeatChoice:
    return SeatChoice(spec=entrant.persona_spec())


class TournamentKind(BatchKind):
    """A tournament's jobs: a debate per match (the scheduler's MATCH, whatever its format), a replay per judgment
    beyond the judge inside a match's debate, if its format seats one."""

    kind = "tournament"
    faces = "tournaments.faces.FACES"
    model = Tournament
    # A judgment's replay, or a match's own debate (as `of_debate` looks).
    debate_paths = ("tournament_judgment__match__tournament", "tournament_match__tournament")
    # Its hooks that its own modules answer.
    jobs = staticmethod(state.jobs)
    debates = staticmethod(state.debates_of)
    progress = staticmethod(state.progress)
    group = staticmethod(live.tournament_group)
    live_html = staticmethod(broadcast.live_html_of)
    push = staticmethod(broadcast.push)

    def create(self, batch: Tournament, job: schedule.Job, memo: dict[str, Any]) -> int | None:
        if job.kind == schedule.MATCH:
            debate_id = self.link(job, _create_match_debate(batch, job.id, memo))
            if debate_id is not None:  # its own judge judges inside it: that judgment's debate is the match's
                Judgment.objects.filter(match_id=job.id, in_debate=True).update(debate_id=debate_id)
            return debate_id
        return self.link(job, _create_replay(batch, job.id))

    def rows_of(self, job: schedule.Job) -> QuerySet[Any]:
        return (Match if job.kind == schedule.MATCH else Judgment).objects.filter(pk=job.id)

    def of_debate(self, debate_id: int) -> int | None:
        # A classic or structured match's debate has no judgment of its own (its judges replay it): its match tells.
        found = Judgment.objects.filter(debate_id=debate_id).values_list("match__tournament_id", flat=True).first()
        if found is None:
            found = Match.objects.filter(debate_id=debate_id).values_list("tournament_id", flat=True).first()
        return found


TOURNAMENT = TournamentKind()


def bench_seats(fmt: Format) -> list[Any]:
    """A card's judge seats besides the one that gives its verdict (a moot court's wing judges), in seat order: the
    panel's second, third... judges sit in them."""
    return [s for s in fmt.seat_specs if s.role == "judge" and s.key != fmt.judge_seat]


def _seats(match: Match, fmt: Format, judges: Sequence[Entrant], moderator: Entrant | None) -> dict[str, SeatChoice]:
    """The match's seats, in its format's seat order: the FOR entrant fills every seat of the side arguing for
    (else the first side), the AGAINST entrant every seat of the other (with more sides, each entrant every seat of
    its side); its judge's seat, if it has one, the first judge, and its other judge seats the next judges in turn
    (those left over stay empty), or its referees' seats the judges in turn; a moderator's seat the tournament's
    moderator. A format with a required seat of none of these kinds is refused before (`unfilled_seats`)."""
    first_judge = judges[0]
    if match.sides:
        by_id = {e.pk: e for e in Entrant.objects.filter(pk__in=match.sides)}
        entrant = {key: by_id[pk] for side, pk in zip(fmt.sides, match.sides, strict=True) for key in side.seats}
    else:
        first = next((s for s in fmt.sides if s.stance == "for"), fmt.sides[0])
        second = next(s for s in fmt.sides if s is not first)
        entrant = {k: match.debater_for for k in first.seats} | {k: match.debater_against for k in second.seats}
    if fmt.judge_seat:
        entrant[fmt.judge_seat] = first_judge
    if design.refereed(fmt):
        entrant.update(zip(fmt.referee_seats, judges, strict=False))
    else:
        entrant.update(zip((s.key for s in bench_seats(fmt)), judges[1:], strict=False))
    # An entrant filling a team's several seats speaks in each under its name and the seat's ("Ann (Prime
    # Minister)"): the transcript tells speakers apart by name.
    teams = {key for side in fmt.sides if len(side.seats) > 1 for key in side.seats}
    seats = {}
    for spec in fmt.seat_specs:
        if spec.key in teams:
            persona = entrant[spec.key].persona_spec()
            seats[spec.key] = SeatChoice(spec=replace(persona, name=f"{persona.name} ({spec.label})"[:100]))
        elif spec.key in entrant:
            seats[spec.key] = _choice(entrant[spec.key])
        elif spec.role == "moderator" and moderator is not None:
            seats[spec.key] = _choice(moderator)
    return seats


def _create_match_debate(tournament: Tournament, match_id: int, memo: dict[str, Any]) -> Debate:
    match = Match.objects.select_related("question", "debater_for", "debater_against").get(pk=match_id)
    if "judges" not in memo:  # read once a pass
        entrants = tournament.entrants.order_by("order")
        memo["judges"] = list(entrants.filter(role=Entrant.Role.JUDGE))
        memo["moderator"] = entrants.filter(role=Entrant.Role.MODERATOR).first()
    assert memo["judges"]
    fmt = tournament.format_of(match.format)
    known = {o.name for o in fmt.option_specs}
    return create_debate(
        format_name=match.format,
        card_source=tournament.cards.get(match.format, ""),
        topic=match.question.topic,
        premise=match.question.premise,
        seats=_seats(match, fmt, memo["judges"], memo["moderator"]),
        options={k: v for k, v in tournament.options.items() if k in known},
        owner=tournament.owner,
        visibility=tournament.visibility,
        in_batch=True,
    )


def _create_replay(tournament: Tournament, judgment_id: int) -> Debate:
    judgment = Judgment.objects.select_related("match__debate", "judge").get(pk=judgment_id)
    judged = judgment.match.debate
    assert judged is not None
    return create_replay(
        judged, _choice(judgment.judge), owner=tournament.owner, visibility=tournament.visibility, in_batch=True
    )
