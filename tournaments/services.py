"""Creating tournaments, and the tournament kind of batch (`TOURNAMENT`): one pass, the runner loop, the Celery tick
chain, the sweep and the owner's actions are batches/kinds.py's, shared with experiments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from batches import schedule
from batches.kinds import BatchKind
from batches.panel import BatchError, Contestant, Rules, check, check_budget, given, named, save_snapshots
from chaoslm import live
from chaoslm.sharing import Visibility
from debates.formats import get_format
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


def _check(
    debaters: Sequence[Contestant],
    judges: Sequence[Contestant],
    questions: Sequence[QuestionSpec],
    sides: str,
    repeats: int,
    concurrency: int,
    visibility: str,
    options: dict[str, Any],
    formats: Sequence[str] = (design.DEFAULT,),
    moderator: Contestant | None = None,
) -> design.Estimate:
    offered = design.formats()
    unknown = [f for f in formats if f not in offered]
    if not formats or unknown or len(set(formats)) != len(formats):
        raise TournamentError(f"A tournament's formats are one or more of {', '.join(offered)}, each once.")
    # Each format takes the options it has (a word limit is everyone's).
    known = {o.name: o for f in formats for o in get_format(f).option_specs}
    check(RULES, debaters, judges, options, known, concurrency, visibility)
    moderated = [f for f in formats if needs_moderator(f)]
    if bool(moderated) != (moderator is not None):
        named_ = " or ".join(moderated or [f for f in offered if needs_moderator(f)])
        raise TournamentError(f"A {named_} debate needs a moderator; give one only when a {named_} debate is run.")
    if moderator is not None and moderator.spec.name in {c.spec.name for c in (*debaters, *judges)}:
        raise TournamentError(f"{moderator.spec.name} cannot both moderate and debate or judge.")
    if not questions:
        raise TournamentError("A tournament needs at least one question.")
    if sides not in Tournament.Sides.values:
        raise TournamentError("Sides must be 'both' or 'once'.")
    if not 1 <= repeats <= MAX_REPEATS:
        raise TournamentError(f"Repeats must be between 1 and {MAX_REPEATS}.")
    for format_name in formats:
        silent = design.silent_side(format_name, options)
        if silent:
            raise TournamentError(silent)
    size = design.estimate(len(questions), len(debaters), len(judges), sides, repeats, options, tuple(formats))
    if size.debates > MAX_DEBATES:
        raise TournamentError(f"That is {size.debates} debates; a tournament runs at most {MAX_DEBATES}.")
    return size


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
    pairing debates once in each of its `formats` (design.formats()), the formats one after another; a format
    with a moderator's seat (classic) is led by `moderator`."""
    name = named(RULES, name)
    options = given(options)
    formats = list(formats)
    size = _check(debaters, judges, questions, sides, repeats, concurrency, visibility, options, formats, moderator)
    check_budget(owner, size.calls, [*debaters, *judges, *([moderator] if moderator else [])])
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name,
            owner=owner,
            format=",".join(formats),
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
        pairings = design.pairings(len(questions), len(debaters), sides)
        matches = Match.objects.bulk_create(
            [
                Match(
                    tournament=tournament,
                    order=order,
                    format=format_name,
                    question=saved_questions[p.question],
                    debater_for=entrants[Entrant.Role.DEBATER][p.debater_for],
                    debater_against=entrants[Entrant.Role.DEBATER][p.debater_against],
                )
                for order, (format_name, p) in enumerate((f, p) for f in formats for p in pairings)
            ]
        )
        Judgment.objects.bulk_create(
            [
                Judgment(
                    match=match,
                    judge=judge,
                    repeat=repeat,
                    in_debate=(index == 0 and repeat == 0 and design.judged_in_debate(match.format)),
                )
                for match in matches
                for index, judge in enumerate(entrants[Entrant.Role.JUDGE])
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
    model = Tournament
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


def needs_moderator(format_name: str) -> bool:
    """Whether the format has a moderator's seat a tournament must fill."""
    return any(s.role == "moderator" and s.required for s in get_format(format_name).seat_specs)


def _seats(match: Match, first_judge: Entrant, moderator: Entrant | None) -> dict[str, SeatChoice]:
    """The match's seats, in its format's seat order: the FOR entrant fills every seat of the side arguing for
    (else the first side), the AGAINST entrant every seat of the other; its judge's seat, if it has one, the first
    judge; a moderator's seat the tournament's moderator."""
    fmt = get_format(match.format)
    first = next((s for s in fmt.sides if s.stance == "for"), fmt.sides[0])
    second = next(s for s in fmt.sides if s is not first)
    entrant = {key: match.debater_for for key in first.seats} | {key: match.debater_against for key in second.seats}
    if fmt.judge_seat:
        entrant[fmt.judge_seat] = first_judge
    seats = {}
    for spec in fmt.seat_specs:
        if spec.key in entrant:
            seats[spec.key] = _choice(entrant[spec.key])
        elif spec.role == "moderator" and moderator is not None:
            seats[spec.key] = _choice(moderator)
    return seats


def _create_match_debate(tournament: Tournament, match_id: int, memo: dict[str, Any]) -> Debate:
    match = Match.objects.select_related("question", "debater_for", "debater_against").get(pk=match_id)
    if "judge" not in memo:  # read once a pass
        entrants = tournament.entrants.order_by("order")
        memo["judge"] = entrants.filter(role=Entrant.Role.JUDGE).first()
        memo["moderator"] = entrants.filter(role=Entrant.Role.MODERATOR).first()
    assert memo["judge"] is not None
    known = {o.name for o in get_format(match.format).option_specs}
    return create_debate(
        format_name=match.format,
        topic=match.question.topic,
        premise=match.question.premise,
        seats=_seats(match, memo["judge"], memo["moderator"]),
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
