"""Creating and running tournaments: one pass starts what the scheduler says; owners pause, resume, cancel.

Where a tournament runs is decided in `_submit`, `_wake` and the inline loop alone (the only code here
that touches a runner), so moving to another runner API changes those functions only:

- inline: a loop on the runner's event loop runs a pass and pushes the page, then waits (PUSH_EVERY or
  CHAOSLM_TOURNAMENT_TICK seconds, the sooner), until the tournament settles; each of its debates that
  finishes runs a pass at once, in the thread that stored it, and starts what that pass chose;
- celery: `tournaments.tasks.advance_tournament` runs one pass; the task carrying the tournament's
  current tick token re-enqueues itself with a countdown until the tournament settles, and every
  debate that finishes enqueues a pass at once (so a tournament never waits a whole tick to go on).

Passes are serialized by the tournament's row lock; a debate is created for a job only while the job
has none (one-to-one links, a guarded update), so redelivered tasks and double starts are harmless.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import logging
import math
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.signals import post_save
from django.utils import timezone

from chaoslm import limits, live, runner, sharing
from chaoslm.personas.models import Persona
from chaoslm.personas.yaml_io import PersonaSpec
from chaoslm.sharing import Visibility
from debates import limits as debate_limits
from debates.formats import FormatError, get_format
from debates.models import Debate
from debates.replay import create_replay
from debates.setup import SeatChoice, create_debate
from tournaments import broadcast, design, schedule, state
from tournaments.models import Entrant, Judgment, Match, Question, Tournament
from tournaments.questions import QuestionSpec

logger = logging.getLogger("chaoslm.tournaments")

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
        entrants = {
            role: Entrant.objects.bulk_create(
                [
                    Entrant(
                        tournament=tournament,
                        role=role,
                        order=i,
                        name=c.spec.name,
                        persona=c.persona,
                        spec=c.spec.to_dict(),
                    )
                    for i, c in enumerate(group)
                ]
            )
            for role, group in ((Entrant.Role.DEBATER, debaters), (Entrant.Role.JUDGE, judges))
        }
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


# -- one pass ------------------------------------------------------------------------------------
def _choice(entrant: Entrant) -> SeatChoice:
    return SeatChoice(spec=entrant.persona_spec())


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


def _debate_of(job: schedule.Job) -> int | None:
    model = Match if job.kind == schedule.DUEL else Judgment
    return model.objects.filter(pk=job.id).values_list("debate_id", flat=True).first()


def advance(
    tournament_id: int, *, stalled_after: float | None = None, start: Callable[[int], None] | None = None
) -> schedule.Decision:
    """One pass: start what the scheduler says now; mark the tournament completed once it settles.

    `stalled_after` (default CHAOSLM_STALLED_AFTER): a debate in flight with no progress for that long
    is started again (its worker died); `tournament resume` passes 0 to restart every one at once.
    `start(debate_id)` runs a debate (by default on the configured runner, once the pass commits).
    """
    return _pass(tournament_id, stalled_after, start)[0]


def _pass(
    tournament_id: int, stalled_after: float | None, start: Callable[[int], None] | None
) -> tuple[schedule.Decision, bool]:
    """`advance`, and whether the tournament is settled after it (as `is_settled` would say, without asking)."""
    stalled_after = settings.CHAOSLM_STALLED_AFTER if stalled_after is None else stalled_after
    start = start or _start_debate
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        jobs = state.jobs(tournament, stalled_after, open_only=True)
        decision = schedule.plan(_within_owner_cap(tournament, state.settings_of(tournament), jobs), jobs)
        first_judge = None
        started: list[int] = []
        for job in decision.create:
            try:
                if job.kind == schedule.DUEL:
                    first_judge = (
                        first_judge or tournament.entrants.filter(role=Entrant.Role.JUDGE).order_by("order").first()
                    )
                    assert first_judge is not None
                    debate_id = _create_duel(tournament, job.id, first_judge)
                else:
                    debate_id = _create_replay(tournament, job.id)
            except FormatError as error:
                # A persona that cannot take its seat (a provider deleted since): the match fails, the rest go on.
                logger.warning("tournament %s: %s cannot start: %s", tournament_id, job, error)
                continue
            if debate_id is not None:
                started.append(debate_id)
        for job in decision.retry:
            model = Match if job.kind == schedule.DUEL else Judgment
            if model.objects.filter(pk=job.id, attempts=job.attempts).update(attempts=F("attempts") + 1):
                started.append(_debate_of(job) or 0)
        started += [_debate_of(job) or 0 for job in decision.resume]
        for debate_id in started:
            if debate_id:
                start(debate_id)
        if decision.settled and tournament.status == Tournament.Status.RUNNING:
            tournament.status = Tournament.Status.COMPLETED
            tournament.finished_at = timezone.now()
            tournament.save(update_fields=["status", "finished_at", "updated_at"])
    # As `is_settled` would say now (the decision is the plan on this pass's rows), without another query.
    return decision, _settled(tournament.status, lambda: decision.settled)


def _within_owner_cap(
    tournament: Tournament, wanted: schedule.Settings, jobs: Sequence[schedule.Job]
) -> schedule.Settings:
    """The tournament's concurrency, less what the owner's other tournaments already run, so that one person's
    matches in flight stay within CHAOSLM_MAX_RUNNING_MATCHES whatever number of tournaments they start."""
    owner = tournament.owner
    if owner is None or limits.exempt(owner):
        return wanted
    here = sum(1 for job in jobs if job.status in schedule.IN_FLIGHT)
    elsewhere = max(0, debate_limits.running_in_batches(owner) - here)
    free = max(0, settings.CHAOSLM_MAX_RUNNING_MATCHES - elsewhere)
    return dataclasses.replace(wanted, concurrency=min(wanted.concurrency, free))


def is_settled(tournament_id: int) -> bool:
    """Whether no pass has anything more to do: completed, paused, or cancelled with nothing in flight."""
    tournament = Tournament.objects.get(pk=tournament_id)
    return _settled(
        tournament.status, lambda: schedule.plan(state.settings_of(tournament), state.jobs(tournament)).settled
    )


def _settled(status: str, nothing_in_flight: Callable[[], bool]) -> bool:
    """The rule of `is_settled`, given the status and how to tell whether a cancelled one has work in flight."""
    if status == Tournament.Status.RUNNING:
        return False
    if status == Tournament.Status.CANCELLED:
        return nothing_in_flight()
    return True


# -- owner actions -------------------------------------------------------------------------------
def start(tournament: Tournament) -> None:
    """Run (or go on running) the tournament on the configured runner."""
    _submit(tournament.pk)


def pause(tournament: Tournament) -> None:
    """Start nothing new; the debates in flight finish."""
    Tournament.objects.filter(pk=tournament.pk, status=Tournament.Status.RUNNING).update(
        status=Tournament.Status.PAUSED, updated_at=timezone.now()
    )
    transaction.on_commit(lambda: broadcast.push(tournament.pk))


def resume(tournament: Tournament, *, stalled_after: float | None = None) -> None:
    """Go on with a paused tournament, or a running one whose process died (`stalled_after=0` then
    restarts each of its debates in flight at once rather than after CHAOSLM_STALLED_AFTER)."""
    Tournament.objects.filter(pk=tournament.pk, status=Tournament.Status.PAUSED).update(
        status=Tournament.Status.RUNNING, updated_at=timezone.now()
    )
    if stalled_after is not None:
        advance(tournament.pk, stalled_after=stalled_after)
    _submit(tournament.pk)


def cancel(tournament: Tournament) -> None:
    """Start nothing more, for good; the debates in flight finish and count."""
    Tournament.objects.filter(
        pk=tournament.pk, status__in=[Tournament.Status.RUNNING, Tournament.Status.PAUSED]
    ).update(status=Tournament.Status.CANCELLED, finished_at=timezone.now(), updated_at=timezone.now())
    transaction.on_commit(lambda: broadcast.push(tournament.pk))


def delete(tournament: Tournament) -> None:
    """Delete a tournament and its debates, stopping its run first: nothing new starts (cancelled), its
    inline loop and inline debates are cancelled at once, and work on Celery workers finds the rows gone and
    stops quietly (`run_inline`, `tick`, the engine's `DebateDeleted`)."""
    Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.CANCELLED, updated_at=timezone.now())
    runner.cancel("tournament", tournament.pk)
    mine = Q(tournament_match__tournament=tournament) | Q(tournament_judgment__match__tournament=tournament)
    debate_ids = list(Debate.objects.filter(mine).values_list("pk", flat=True))
    for debate_id in debate_ids:
        runner.cancel("debate", debate_id)
    with transaction.atomic():
        tournament.delete()
        Debate.objects.filter(pk__in=debate_ids).delete()


# -- the runner (the only code here that knows where tournaments run) ------------------------------
_wakers: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}


def _submit(tournament_id: int) -> None:
    """Advance the tournament on the configured runner until it settles, once the transaction commits."""
    if settings.CHAOSLM_RUNNER == "celery":
        token = secrets.token_hex(8)
        Tournament.objects.filter(pk=tournament_id).update(tick_token=token, ticked_at=timezone.now())
        transaction.on_commit(lambda: _send(tournament_id, token))
    else:
        runner.submit("tournament", tournament_id)


def _start_debate(debate_id: int) -> None:
    runner.submit("debate", debate_id)


def _wake(tournament_id: int) -> None:
    """One of the tournament's debates finished: go on now rather than at the next tick."""
    if settings.CHAOSLM_RUNNER == "celery":
        transaction.on_commit(lambda: _send(tournament_id, ""))
    elif tournament_id in _wakers:
        transaction.on_commit(lambda: _pass_here(tournament_id))


def _pass_here(tournament_id: int) -> None:
    """Inline: the pass runs right here, in the thread that stored the finished debate (the engine's database
    thread), and the debates it starts go straight to the runner's loop: the next match starts without a trip
    through the tournament's loop and back. The loop itself wakes only when the tournament settles."""
    found = _wakers.get(tournament_id)
    if found is None:
        return
    loop, wake = found
    chosen: list[int] = []
    try:
        _, settled = _pass(tournament_id, None, chosen.append)
    except Tournament.DoesNotExist:
        return  # deleted: its loop is cancelled, nothing to go on with
    except Exception:
        # The debate that finished must not fail for it: the loop's own pass goes on instead.
        logger.exception("tournament %s: a pass after a debate finished failed", tournament_id)
        settled = True
    for debate_id in chosen:
        # Submitted from here, its task is queued before the finished debate's own last steps (and asks the database
        # thread for its first before they do). From an empty context: with this thread's, the task would inherit
        # its "sync call in progress" and could make no sync call.
        contextvars.Context().run(runner.inline.submit, "debate", debate_id)
    if settled:
        loop.call_soon_threadsafe(wake.set)


def _send(tournament_id: int, token: str, countdown: float = 0) -> None:
    from chaoslm.celery import app

    app.send_task("tournaments.tasks.advance_tournament", args=[tournament_id, token], countdown=countdown)


# The inline loop pushes the tournament's page at most this often (seconds) while it runs, and once as it settles:
# drawing the page costs more than a pass, and a pass runs each time one of its debates finishes.
PUSH_EVERY = 1.0


async def run_inline(tournament_id: int) -> None:
    """The inline runner's loop for one tournament: a pass and a push of its page, then wait for the next push (or
    tick, if sooner), or for a debate's pass (`_pass_here`) to say the tournament settled."""
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    _wakers[tournament_id] = (loop, wake)
    pushed_at = -math.inf
    try:
        while True:
            wake.clear()
            # The debates start from here, not from inside the pass: a task created in the loop's sync
            # thread would inherit its "sync call in progress" context and could make no sync call.
            chosen: list[int] = []
            _, settled = await sync_to_async(_pass)(tournament_id, None, chosen.append)
            for debate_id in chosen:
                runner.inline.submit("debate", debate_id)
            if settled or loop.time() - pushed_at >= PUSH_EVERY:
                # Pushed from the loop, not from inside the pass: a pass runs in the loop's one sync thread.
                await live.push(
                    live.tournament_group(tournament_id), await sync_to_async(broadcast.live_html_of)(tournament_id)
                )
                pushed_at = loop.time()
            if settled:
                return
            # Its debates finish, and start the next ones, outside this loop: it comes again when a push is due.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    wake.wait(), min(settings.CHAOSLM_TOURNAMENT_TICK, pushed_at + PUSH_EVERY - loop.time())
                )
    except Tournament.DoesNotExist:
        logger.info("tournament %s was deleted; its loop stops", tournament_id)
    finally:
        _wakers.pop(tournament_id, None)


def tick(tournament_id: int, token: str) -> None:
    """The Celery task's body: a pass; then, if this task carries the current tick token and the
    tournament is not settled, enqueue the next tick (one chain per tournament, whatever is redelivered)."""
    try:
        _tick(tournament_id, token)
    except Tournament.DoesNotExist:
        logger.info("tournament %s was deleted; its tick chain stops", tournament_id)


def _tick(tournament_id: int, token: str) -> None:
    advance(tournament_id)
    broadcast.push(tournament_id)
    if not token:
        return
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.tick_token != token:
            return
        tournament.ticked_at = timezone.now()
        if is_settled(tournament_id):
            tournament.tick_token = ""
            tournament.save(update_fields=["tick_token", "ticked_at"])
            return
        tournament.tick_token = secrets.token_hex(8)
        tournament.save(update_fields=["tick_token", "ticked_at"])
        following = tournament.tick_token
        transaction.on_commit(lambda: _send(tournament_id, following, settings.CHAOSLM_TOURNAMENT_TICK))


def sweep() -> list[int]:
    """The periodic sweep (Celery beat): tournaments still running whose tick chain stopped (its message
    was lost with a killed worker) get a new one."""
    limit = timezone.now() - timedelta(seconds=max(3 * settings.CHAOSLM_TOURNAMENT_TICK, 30))
    ids = list(
        Tournament.objects.filter(status=Tournament.Status.RUNNING)
        .filter(Q(ticked_at__lt=limit) | Q(ticked_at__isnull=True, created_at__lt=limit))
        .values_list("pk", flat=True)
    )
    for tournament_id in ids:
        _submit(tournament_id)
    return ids


def _debate_saved(sender: type[Debate], instance: Debate, update_fields: Any = None, **_: Any) -> None:
    if update_fields is not None and "status" not in update_fields:
        return
    if not instance.in_batch:
        return  # not a tournament's debate: no query to find out
    if instance.status not in (Debate.Status.COMPLETED, Debate.Status.ERROR, Debate.Status.INTERRUPTED):
        return
    tournament_id = (
        Judgment.objects.filter(debate_id=instance.pk).values_list("match__tournament_id", flat=True).first()
    )
    if tournament_id is not None:
        _wake(tournament_id)


def connect_signals() -> None:
    post_save.connect(_debate_saved, sender=Debate, dispatch_uid="tournaments.debate_saved")


def set_visibility(tournament: Tournament, value: str) -> None:
    """The tournament's visibility (ValueError if unknown), and its debates' with it: a duel or a judge's
    replay is seen where its tournament is, and sockets that lose the right close (sharing.set_visibility)."""
    sharing.set_visibility(tournament, value)
    mine = Q(tournament_match__tournament=tournament) | Q(tournament_judgment__match__tournament=tournament)
    for debate in Debate.objects.filter(mine).exclude(visibility=value):
        sharing.set_visibility(debate, value)
