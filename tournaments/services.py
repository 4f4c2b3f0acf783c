"""Creating tournaments; owners pause, resume, cancel. One pass, the runner loop, the Celery tick chain and the
sweep are tournaments/batches.py's, shared with experiments: a tournament is a `TournamentBatch` there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet

from chaoslm import live
from chaoslm.personas.models import Persona
from chaoslm.personas.yaml_io import PersonaSpec
from chaoslm.sharing import Visibility
from debates.formats import get_format
from debates.models import Debate
from debates.replay import create_replay
from debates.setup import SeatChoice, create_debate
from tournaments import batches, broadcast, design, schedule, state
from tournaments.models import Entrant, Judgment, Match, PersonaSnapshot, Question, Tournament
from tournaments.questions import QuestionSpec

MAX_DEBATERS = 20
MAX_JUDGES = 10
MAX_REPEATS = 10
MAX_CONCURRENCY = 100
MAX_DEBATES = 20_000


class TournamentError(ValueError):
    """A tournament that cannot be made as asked; the message is for the user."""


@dataclass(frozen=True)
class Contestant:
    """A debater or judge: a stored persona, or a persona read from a YAML file."""

    spec: PersonaSpec
    persona: Persona | None = None

    @classmethod
    def of(cls, persona: Persona) -> Contestant:
        return cls(spec=persona.spec(), persona=persona)


def save_snapshots(
    model: type[PersonaSnapshot], debaters: Sequence[Contestant], judges: Sequence[Contestant], **link: Any
) -> dict[str, list[Any]]:
    """A batch's debaters and judges stored as `model` rows (Entrant, Participant), by role, in order; `link`
    names the batch (`tournament=...`)."""
    return {
        role: model.objects.bulk_create(
            [
                model(role=role, order=i, name=c.spec.name, persona=c.persona, spec=c.spec.to_dict(), **link)
                for i, c in enumerate(group)
            ]
        )
        for role, group in ((PersonaSnapshot.Role.DEBATER, debaters), (PersonaSnapshot.Role.JUDGE, judges))
    }


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
    if len(debaters) < 2:
        raise TournamentError("A tournament needs at least two debaters.")
    if len(debaters) > MAX_DEBATERS:
        raise TournamentError(f"A tournament takes at most {MAX_DEBATERS} debaters.")
    if not judges:
        raise TournamentError("A tournament needs at least one judge.")
    if len(judges) > MAX_JUDGES:
        raise TournamentError(f"A tournament takes at most {MAX_JUDGES} judges.")
    for group, label in ((debaters, "debater"), (judges, "judge")):
        names = [c.spec.name for c in group]
        if len(set(names)) != len(names):
            raise TournamentError(f"Each {label} must be a different persona.")
    clash = design.names_clash([c.spec.name for c in debaters], [c.spec.name for c in judges])
    if clash:
        raise TournamentError(f"{', '.join(clash)} cannot both debate and judge.")
    if not questions:
        raise TournamentError("A tournament needs at least one question.")
    if sides not in Tournament.Sides.values:
        raise TournamentError("Sides must be 'both' or 'once'.")
    if not 1 <= repeats <= MAX_REPEATS:
        raise TournamentError(f"Repeats must be between 1 and {MAX_REPEATS}.")
    if visibility not in Visibility.values:
        raise TournamentError("Visibility must be private, unlisted or public.")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise TournamentError(f"Concurrency must be between 1 and {MAX_CONCURRENCY}.")
    duel = get_format("duel")
    known = {o.name: o for o in duel.option_specs}
    for name, value in options.items():
        spec = known.get(name)
        if spec is None:
            raise TournamentError(f"The duel has no option {name!r}; its options are {', '.join(known)}.")
        if not isinstance(value, int) or not spec.minimum <= value <= spec.maximum:
            raise TournamentError(f"{spec.label} must be a whole number from {spec.minimum} to {spec.maximum}.")
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


# -- running it (the machinery is tournaments/batches.py, shared with experiments) ----------------
def _choice(entrant: Entrant) -> SeatChoice:
    return SeatChoice(spec=entrant.persona_spec())


class TournamentBatch(batches.Batch):
    """A tournament's jobs: a duel per match, a replay per judgment beyond the duel's own judge."""

    kind = "tournament"
    task = "tournaments.tasks.advance_tournament"
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

    def group(self, batch_id: int) -> str:
        return live.tournament_group(batch_id)

    def live_html(self, batch_id: int) -> str:
        return broadcast.live_html_of(batch_id)

    def push(self, batch_id: int) -> None:
        broadcast.push(batch_id)


TOURNAMENT = TournamentBatch()
batches.register(TOURNAMENT)


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


def advance(
    tournament_id: int, *, stalled_after: float | None = None, start: Callable[[int], None] | None = None
) -> schedule.Decision:
    """One pass (batches.advance): start what the scheduler says now; mark the tournament completed once it settles."""
    return batches.advance(TOURNAMENT, tournament_id, stalled_after=stalled_after, start=start)


def is_settled(tournament_id: int) -> bool:
    """Whether no pass has anything more to do: completed, paused, or cancelled with nothing in flight."""
    return batches.is_settled(TOURNAMENT, tournament_id)


# -- owner actions -------------------------------------------------------------------------------
def start(tournament: Tournament) -> None:
    """Run (or go on running) the tournament on the configured runner."""
    batches.submit(TOURNAMENT, tournament.pk)


def pause(tournament: Tournament) -> None:
    """Start nothing new; the debates in flight finish."""
    batches.pause(TOURNAMENT, tournament.pk)


def resume(tournament: Tournament, *, stalled_after: float | None = None) -> None:
    """Go on with a paused tournament, or a running one whose process died (`stalled_after=0` then
    restarts each of its debates in flight at once rather than after CHAOSLM_STALLED_AFTER)."""
    batches.resume(TOURNAMENT, tournament.pk, stalled_after=stalled_after)


def cancel(tournament: Tournament) -> None:
    """Start nothing more, for good; the debates in flight finish and count."""
    batches.cancel(TOURNAMENT, tournament.pk)


def delete(tournament: Tournament) -> None:
    """Delete a tournament and its debates, stopping its run first (batches.delete)."""
    batches.delete(TOURNAMENT, tournament)


async def run_inline(tournament_id: int) -> None:
    await batches.run_inline(TOURNAMENT, tournament_id)


def tick(tournament_id: int, token: str) -> None:
    batches.tick(TOURNAMENT, tournament_id, token)


def sweep() -> list[int]:
    return batches.sweep(TOURNAMENT)


def connect_signals() -> None:
    batches.connect_signals()


def set_visibility(tournament: Tournament, value: str) -> None:
    """The tournament's visibility, and its duels' and judges' replays' with it (batches.set_visibility)."""
    batches.set_visibility(TOURNAMENT, tournament, value)
