"""Creating tournaments, and the tournament kind of batch (`TOURNAMENT`): one pass, the runner loop, the Celery tick
chain, the sweep and the owner's actions are batches/kinds.py's, shared with experiments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet

from batches import schedule
from batches.kinds import BatchKind
from batches.panel import BatchError, Contestant, Rules, check, save_snapshots
from batches.progress import ProgressView
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
) -> design.Estimate:
    duel = get_format("duel")
    known = {o.name: o for o in duel.option_specs}
    check(RULES, debaters, judges, options, known, concurrency, visibility)
    if not questions:
        raise TournamentError("A tournament needs at least one question.")
    if sides not in Tournament.Sides.values:
        raise TournamentError("Sides must be 'both' or 'once'.")
    if not 1 <= repeats <= MAX_REPEATS:
        raise TournamentError(f"Repeats must be between 1 and {MAX_REPEATS}.")
    turns = options.get("turns", known["turns"].default)
    if turns < design.MIN_TURNS:
        raise TournamentError(design.TOO_FEW_TURNS)
    size = design.estimate(len(questions), len(debaters), len(judges), sides, repeats, turns)
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
) -> Tournament:
    """Store a tournament with all its matches and judgments (nothing runs yet: see `start`)."""
    name = name.strip()
    if not name:
        raise TournamentError("The tournament needs a name.")
    options = {k: v for k, v in (options or {}).items() if v is not None}
    _check(debaters, judges, questions, sides, repeats, concurrency, visibility, options)
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name[:200],
            owner=owner,
            options=options,
            sides=sides,
            repeats=repeats,
            concurrency=concurrency,
            visibility=visibility,
        )
        entrants = save_snapshots(Entrant, debaters, judges, tournament=tournament)
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
                    question=saved_questions[p.question],
                    debater_for=entrants[Entrant.Role.DEBATER][p.debater_for],
                    debater_against=entrants[Entrant.Role.DEBATER][p.debater_against],
                )
                for order, p in enumerate(pairings)
            ]
        )
        Judgment.objects.bulk_create(
            [
                Judgment(match=match, judge=judge, repeat=repeat, in_duel=(index == 0 and repeat == 0))
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
    """A tournament's jobs: a duel per match, a replay per judgment beyond the duel's own judge."""

    kind = "tournament"
    model = Tournament

    def jobs(
        self, batch: Tournament, stalled_after: float | None = None, *, open_only: bool = False
    ) -> list[schedule.Job]:
        return state.jobs(batch, stalled_after, open_only=open_only)

    def create(self, batch: Tournament, job: schedule.Job, memo: dict[str, Any]) -> int | None:
        if job.kind == schedule.DUEL:
            if "judge" not in memo:
                memo["judge"] = batch.entrants.filter(role=Entrant.Role.JUDGE).order_by("order").first()
            assert memo["judge"] is not None
            return _create_duel(batch, job.id, memo["judge"])
        return _create_replay(batch, job.id)

    def retry(self, job: schedule.Job) -> bool:
        model = Match if job.kind == schedule.DUEL else Judgment
        return bool(model.objects.filter(pk=job.id, attempts=job.attempts).update(attempts=F("attempts") + 1))

    def debate_of(self, job: schedule.Job) -> int | None:
        model = Match if job.kind == schedule.DUEL else Judgment
        return model.objects.filter(pk=job.id).values_list("debate_id", flat=True).first()

    def give_up(self, job: schedule.Job) -> None:
        model = Match if job.kind == schedule.DUEL else Judgment
        model.objects.filter(pk=job.id, debate__isnull=True).update(attempts=schedule.MAX_ATTEMPTS)

    def debates(self, batch: Tournament) -> QuerySet[Debate]:
        return state.debates_of(batch)

    def of_debate(self, debate_id: int) -> int | None:
        return Judgment.objects.filter(debate_id=debate_id).values_list("match__tournament_id", flat=True).first()

    def progress(self, batch: Tournament) -> ProgressView:
        return state.progress(batch)

    def group(self, batch_id: int) -> str:
        return live.tournament_group(batch_id)

    def live_html(self, batch_id: int) -> str:
        return broadcast.live_html_of(batch_id)

    def push(self, batch_id: int) -> None:
        broadcast.push(batch_id)


TOURNAMENT = TournamentKind()


def _create_duel(tournament: Tournament, match_id: int, first_judge: Entrant) -> int | None:
    match = Match.objects.select_related("question", "debater_for", "debater_against").get(pk=match_id)
    debate = create_debate(
        format_name=tournament.format,
        topic=match.question.topic,
        premise=match.question.premise,
        seats={"a": _choice(match.debater_for), "b": _choice(match.debater_against), "judge": _choice(first_judge)},
        options=tournament.options,
        owner=tournament.owner,
        visibility=tournament.visibility,
        in_batch=True,
    )
    if not Match.objects.filter(pk=match_id, debate__isnull=True).update(debate=debate, attempts=1):
        debate.delete()  # another pass made it first
        return None
    Judgment.objects.filter(match_id=match_id, in_duel=True).update(debate=debate)
    return debate.pk


def _create_replay(tournament: Tournament, judgment_id: int) -> int | None:
    judgment = Judgment.objects.select_related("match__debate", "judge").get(pk=judgment_id)
    duel = judgment.match.debate
    assert duel is not None
    debate = create_replay(
        duel, _choice(judgment.judge), owner=tournament.owner, visibility=tournament.visibility, in_batch=True
    )
    if not Judgment.objects.filter(pk=judgment_id, debate__isnull=True).update(debate=debate, attempts=1):
        debate.delete()
        return None
    return debate.pk
