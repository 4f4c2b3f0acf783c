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
    formats: Sequence[str] = (design.DUEL,),
    moderator: Contestant | None = None,
) -> design.Estimate:
    unknown = [f for f in formats if f not in design.FORMATS]
    if not formats or unknown or len(set(formats)) != len(formats):
        raise TournamentError(f"A tournament's formats are one or more of {', '.join(design.FORMATS)}, each once.")
    # Each format takes the options it has (a word limit is everyone's).
    known = {o.name: o for f in formats for o in get_format(f).option_specs}
    check(RULES, debaters, judges, options, known, concurrency, visibility)
    if ("classic" in formats) != (moderator is not None):
        raise TournamentError("A classic debate needs a moderator; give one only when a classic debate is run.")
    if moderator is not None and moderator.spec.name in {c.spec.name for c in (*debaters, *judges)}:
        raise TournamentError(f"{moderator.spec.name} cannot both moderate and debate or judge.")
    if not questions:
        raise TournamentError("A tournament needs at least one question.")
    if sides not in Tournament.Sides.values:
        raise TournamentError("Sides must be 'both' or 'once'.")
    if not 1 <= repeats <= MAX_REPEATS:
        raise TournamentError(f"Repeats must be between 1 and {MAX_REPEATS}.")
    if design.DUEL in formats and options.get("turns", known["turns"].default) < design.MIN_TURNS:
        raise TournamentError(design.TOO_FEW_TURNS)
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
    formats: Sequence[str] = (design.DUEL,),
    moderator: Contestant | None = None,
    arena: bool = False,
) -> Tournament:
    """Store a tournament with all its matches and judgments (nothing runs yet: see `TOURNAMENT.start`): each
    pairing debates once in each of its `formats` (duel, classic, structured), the formats one after another;
    a classic debate is led by `moderator`."""
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
                    in_duel=(index == 0 and repeat == 0 and design.judged_in_debate(match.format)),
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
    """A tournament's jobs: a debate per match (the scheduler's DUEL, whatever its format), a replay per judgment
    beyond a duel's own judge."""

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
        if job.kind == schedule.DUEL:
            debate_id = self.link(job, _create_duel(batch, job.id, memo))
            if debate_id is not None:  # the duel's own judge judges inside it: that judgment's debate is the duel
                Judgment.objects.filter(match_id=job.id, in_duel=True).update(debate_id=debate_id)
            return debate_id
        return self.link(job, _create_replay(batch, job.id))

    def rows_of(self, job: schedule.Job) -> QuerySet[Any]:
        return (Match if job.kind == schedule.DUEL else Judgment).objects.filter(pk=job.id)

    def of_debate(self, debate_id: int) -> int | None:
        # A classic or structured match's debate has no judgment of its own (its judges replay it): its match tells.
        found = Judgment.objects.filter(debate_id=debate_id).values_list("match__tournament_id", flat=True).first()
        if found is None:
            found = Match.objects.filter(debate_id=debate_id).values_list("tournament_id", flat=True).first()
        return found


TOURNAMENT = TournamentKind()


def _seats(match: Match, first_judge: Entrant, moderator: Entrant | None) -> dict[str, SeatChoice]:
    """The match's seats in its format: FOR and AGAINST as its two sides; a duel's judge, a classic's moderator."""
    if match.format == "classic":
        assert moderator is not None
        return {
            "moderator": _choice(moderator),
            "pro": _choice(match.debater_for),
            "con": _choice(match.debater_against),
        }
    if match.format == "structured":
        return {"affirmative": _choice(match.debater_for), "negative": _choice(match.debater_against)}
    return {"a": _choice(match.debater_for), "b": _choice(match.debater_against), "judge": _choice(first_judge)}


def _create_duel(tournament: Tournament, match_id: int, memo: dict[str, Any]) -> Debate:
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
    duel = judgment.match.debate
    assert duel is not None
    return create_replay(
        duel, _choice(judgment.judge), owner=tournament.owner, visibility=tournament.visibility, in_batch=True
    )
