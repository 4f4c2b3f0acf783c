"""Kinds of batch of debates (a tournament, an experiment) and running them: one pass starts what the scheduler
says, within the owner's cap; the inline loop, the Celery tick chain, the sweep, and the wake when one of its
debates finishes; the owner's actions (pause, resume, cancel, delete, visibility).

A kind of batch is one `BatchKind` object, registered once (`register`): its hooks say how its jobs are read and
its debates made; its other methods are the same for every kind, and are what the views, tasks, admin and
command line call (docs/adding-a-batch-kind.md).

Where a batch runs is decided in `submit`, `_wake` and the inline loop alone (the only code here that touches a
runner), so moving to another runner API changes those functions only:

- inline: a loop on the runner's event loop runs a pass and pushes the page, then waits (PUSH_EVERY or
  CHAOSLM_BATCH_TICK seconds, the sooner), until the batch settles; each of its debates that finishes
  runs a pass at once, in the thread that stored it, and starts what that pass chose;
- celery: batches/tasks.py's `advance_batch` runs one pass (`tick`); the task carrying the batch's current tick token
  re-enqueues itself with a countdown until the batch settles, and every debate that finishes enqueues a
  pass at once (so a batch never waits a whole tick to go on).

Passes are serialized by the batch's row lock; a debate is created for a job only while the job has none
(one-to-one links, a guarded update), so redelivered tasks and double starts are harmless.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import secrets
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import models, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.signals import post_save
from django.utils import timezone
from django.utils.module_loading import import_string

from batches import schedule
from batches.checks import OverBudget
from batches.progress import ProgressView, settings_of
from chaoslm import costs, limits, live, logging_context, runner, sharing
from debates import limits as debate_limits
from debates.formats import FormatError
from debates.models import Debate

if TYPE_CHECKING:
    from batches.faces import Faces

logger = logging.getLogger("chaoslm.batches")

# A batch's statuses (Tournament.Status, Experiment.Status), as plain strings.
RUNNING, PAUSED, CANCELLED, COMPLETED = "running", "paused", "cancelled", "completed"


class BatchKind:
    """A kind of batch. Its model (a `batches.models.BatchRecord`) has: owner, status, concurrency, finished_at,
    updated_at, tick_token, ticked_at, visibility, share_token.

    A kind fills in the hooks (the methods that raise NotImplementedError, and those on its rows unless it names
    `rows`); the rest is the same for every kind."""

    kind: ClassVar[str]  # the runner's kind for its inline loop, the registry's key, and its Celery ticks' argument
    model: ClassVar[type[models.Model]]
    # Where one model holds all its jobs' rows: that model, each row with a one-to-one `debate`, an `attempts` count
    # and a foreign key named `batch_link` to its batch. Then `rows_of`, `retry`, `debate_of`, `give_up`, `debates`
    # and `of_debate` need no code of the kind's; a kind whose jobs are rows of several models overrides them.
    rows: ClassVar[type[models.Model]]
    batch_link: ClassVar[str]
    # The paths from a Debate to the id of its batch of this kind, in the order `of_debate` looks (`batch_of` reads
    # every kind's in one query); by default the one through `rows`. A kind overriding `of_debate` names its own,
    # or is asked by its `of_debate` when it names none.
    debate_paths: ClassVar[tuple[str, ...] | None] = None
    # Its `batches.faces.Faces` by dotted path ("tournaments.faces.FACES"): its spec's schema and reader, its create,
    # estimate, report, exports and arena, from which the API makes its operations at /<kind>s/.... A path, so that
    # they (and the API's libraries) load with the API, not with every command. None: the API serves it at
    # /batches/<kind>/... only.
    faces: ClassVar[str | None] = None

    # -- the hooks -------------------------------------------------------------------------------
    def jobs(self, batch: Any, stalled_after: float | None = None, *, open_only: bool = False) -> list[schedule.Job]:
        raise NotImplementedError

    def create(self, batch: Any, job: schedule.Job, memo: dict[str, Any]) -> int | None:
        """Make the job's debate (None if another pass made it first); `memo` lasts one pass. May raise FormatError."""
        raise NotImplementedError

    def link(self, job: schedule.Job, debate: Debate) -> int | None:
        """The job's debate is `debate` (its first attempt), unless another pass made one first: then `debate` is
        deleted and None returned."""
        if not self.rows_of(job).filter(debate__isnull=True).update(debate=debate, attempts=1):
            debate.delete()
            return None
        return debate.pk

    def rows_of(self, job: schedule.Job) -> QuerySet[Any]:
        """The job's row."""
        return self.rows.objects.filter(pk=job.id)

    def retry(self, job: schedule.Job) -> bool:
        """One attempt more for a failed job, if no other pass gave it one (its attempts are still `job.attempts`)."""
        return bool(self.rows_of(job).filter(attempts=job.attempts).update(attempts=F("attempts") + 1))

    def debate_of(self, job: schedule.Job) -> int | None:
        return self.rows_of(job).values_list("debate_id", flat=True).first()

    def give_up(self, job: schedule.Job) -> None:
        """The job's debate cannot be made (a persona cannot take its seat): count it failed, with no debate."""
        self.rows_of(job).filter(debate__isnull=True).update(attempts=schedule.MAX_ATTEMPTS)

    def debates(self, batch: Any) -> QuerySet[Debate]:
        """Every debate the batch has made (its duels, its judges' replays)."""
        made = self.rows.objects.filter(**{self.batch_link: batch}).values("debate_id")
        return Debate.objects.filter(pk__in=made)

    def of_debate(self, debate_id: int) -> int | None:
        """The id of the batch of this kind that the debate belongs to, if any."""
        found = self.rows.objects.filter(debate_id=debate_id)
        return found.values_list(f"{self.batch_link}_id", flat=True).first()

    def paths_from_debate(self) -> tuple[str, ...]:
        """`debate_paths`, or the path through `rows` when the kind reads its jobs from them; () when only its
        `of_debate` can tell."""
        if self.debate_paths is not None:
            return self.debate_paths
        if type(self).of_debate is not BatchKind.of_debate:
            return ()
        field = self.rows._meta.get_field("debate")
        if field.remote_field.hidden:  # no way back from a debate (related_name "+"): `of_debate` tells
            return ()
        return (f"{field.related_query_name()}__{self.batch_link}",)

    def progress(self, batch: Any) -> ProgressView:
        """Done, running and failed debates, and the ETA (batches.progress.progress_view over the kind's jobs)."""
        raise NotImplementedError

    def group(self, batch_id: int) -> str:
        raise NotImplementedError

    def live_html(self, batch_id: int) -> str:
        """The batch's live parts to push; nothing while no page shows it."""
        raise NotImplementedError

    # -- the same for every kind -----------------------------------------------------------------
    def api_faces(self) -> Faces | None:
        """Its faces for the API (loaded the first time they are asked for), or None if it has none."""
        return import_string(self.faces) if self.faces else None

    def push(self, batch_id: int) -> None:
        """Send the live parts, as they stand, to every page showing the batch (from synchronous code)."""
        live.push_sync(self.group(batch_id), self.live_html(batch_id))

    def advance(
        self, batch_id: int, *, stalled_after: float | None = None, start: Callable[[int], None] | None = None
    ) -> schedule.Decision:
        """One pass: start what the scheduler says now; mark the batch completed once it settles.

        `stalled_after` (default CHAOSLM_STALLED_AFTER): a debate in flight with no progress for that long
        is started again (its worker died); a `resume` command passes 0 to restart every one at once.
        `start(debate_id)` runs a debate (by default on the configured runner, once the pass commits).
        """
        return _pass(self, batch_id, stalled_after, start)[0]

    def is_settled(self, batch_id: int) -> bool:
        """Whether no pass has anything more to do: completed, paused, or cancelled with nothing in flight."""
        batch = self.model.objects.get(pk=batch_id)
        return _settled(batch.status, lambda: schedule.plan(settings_of(batch), self.jobs(batch)).settled)

    def start(self, batch: Any) -> None:
        """Run (or go on running) the batch on the configured runner."""
        submit(self, batch.pk)

    def pause(self, batch: Any) -> None:
        """Start nothing new, and stop the debates in flight at their next call boundary (the calls they are in
        land; none starts after): they wait, interrupted, for `resume`."""
        with transaction.atomic():
            # Waits for a pass holding the batch's row lock: no pass after it starts a debate, and every debate a
            # pass before it made is among those stopped.
            if self.model.objects.filter(pk=batch.pk, status=RUNNING).update(status=PAUSED, updated_at=timezone.now()):
                stop_debates(self.debates(batch))
        transaction.on_commit(lambda: self.push(batch.pk))

    def resume(self, batch: Any, *, stalled_after: float | None = None) -> None:
        """Go on with a paused batch, or a running one whose process died (`stalled_after=0` then restarts each of
        its debates in flight at once rather than after CHAOSLM_STALLED_AFTER). OverBudget while its owner's
        monthly budget is spent: it would pause again at once."""
        reason = costs.refusal(batch.owner) if batch.owner_id else None
        if reason is not None:
            raise OverBudget(reason)
        with transaction.atomic():
            if self.model.objects.filter(pk=batch.pk, status=PAUSED).update(status=RUNNING, updated_at=timezone.now()):
                # Those not yet stopped go on; the pass resumes those that were.
                self.debates(batch).filter(stop_requested=True).update(stop_requested=False)
        if stalled_after is not None:
            self.advance(batch.pk, stalled_after=stalled_after)
        submit(self, batch.pk)

    def cancel(self, batch: Any) -> None:
        """Start nothing more, for good, and stop the debates in flight at their next call boundary (the calls they
        are in land; none starts after): they stay interrupted, what they said kept."""
        now = timezone.now()
        with transaction.atomic():
            if self.model.objects.filter(pk=batch.pk, status__in=[RUNNING, PAUSED]).update(
                status=CANCELLED, finished_at=now, updated_at=now
            ):
                stop_debates(self.debates(batch))
        transaction.on_commit(lambda: self.push(batch.pk))

    def delete(self, batch: Any) -> None:
        """Delete a batch and its debates, stopping its run first: nothing new starts (cancelled), its inline loop
        and inline debates are cancelled at once, and work on Celery workers finds the rows gone and stops quietly
        (`run_inline`, `tick`, the engine's `DebateDeleted`)."""
        # Waits for a pass holding the batch's row lock: once it is cancelled, no later pass makes a debate, so the
        # debates listed next are all it will ever have.
        self.model.objects.filter(pk=batch.pk).update(status=CANCELLED, updated_at=timezone.now())
        runner.cancel(self.kind, batch.pk)
        debate_ids = list(self.debates(batch).values_list("pk", flat=True))
        for debate_id in debate_ids:
            runner.cancel("debate", debate_id)
        runner.delete_under_work(self.model.objects.filter(pk=batch.pk), Debate.objects.filter(pk__in=debate_ids))

    def pause_here(self, batch: Any) -> None:
        """A command running the batch in its own process is stopped (Ctrl-C, SIGTERM): the batch is paused, so
        that no sweep of a running server takes it up, and this process's runs of it stop now (their calls in
        flight dropped, each debate left interrupted with what landed), for `resume` to go on with. A batch on
        Celery workers stops there at its debates' next call boundary."""
        self.pause(batch)
        runner.cancel(self.kind, batch.pk)
        debate_ids = list(self.debates(batch).values_list("pk", flat=True))
        for debate_id in debate_ids:
            runner.cancel("debate", debate_id)
        # Cancelled together, then waited for: each marks its debate interrupted before the process exits.
        for debate_id in debate_ids:
            runner.cancel("debate", debate_id, wait=True)

    def set_visibility(self, batch: Any, value: str) -> None:
        """The batch's visibility (ValueError if unknown), and its debates' with it: each is seen where its batch
        is, and sockets that lose the right close (sharing.set_visibility)."""
        sharing.set_visibility(batch, value)
        for debate in self.debates(batch).exclude(visibility=value):
            sharing.set_visibility(debate, value)

    async def run_inline(self, batch_id: int) -> None:
        await _run_inline(self, batch_id)

    def tick(self, batch_id: int, token: str) -> None:
        """The Celery task's body: a pass; then, if this task carries the current tick token and the batch is not
        settled, enqueue the next tick (one chain per batch, whatever is redelivered)."""
        try:
            _tick(self, batch_id, token)
        except ObjectDoesNotExist:
            logger.info("%s %s was deleted; its tick chain stops", self.kind, batch_id)

    def sweep(self) -> list[int]:
        """The periodic sweep (Celery beat, the inline runner's): batches still running whose tick chain or inline
        loop stopped (its message lost with a killed worker, its process ended) go on; a loop this process runs is
        left alone."""
        limit = timezone.now() - timedelta(seconds=max(3 * settings.CHAOSLM_BATCH_TICK, 30))
        found = (
            self.model.objects.filter(status=RUNNING)
            .filter(Q(ticked_at__lt=limit) | Q(ticked_at__isnull=True, created_at__lt=limit))
            .values_list("pk", flat=True)
        )
        ids = [batch_id for batch_id in found if not runner.inline.is_running(self.kind, batch_id)]
        for batch_id in ids:
            submit(self, batch_id)
        return ids


def stop_debates(debates: QuerySet[Debate]) -> None:
    """Ask the debates in flight to stop at their next call boundary (debates/engine.py reads the flag as each call
    lands, and as a run starts). One whose run's process has ended has no run to read it: it is interrupted here,
    so that a stopped batch does not count it running."""
    in_flight = debates.filter(status__in=schedule.IN_FLIGHT)
    in_flight.update(stop_requested=True)
    orphaned = [d.pk for d in in_flight.filter(status=Debate.Status.RUNNING).only("runner") if runner.gone(d.runner)]
    if orphaned:
        Debate.objects.filter(pk__in=orphaned).update(status=Debate.Status.INTERRUPTED, updated_at=timezone.now())


KINDS: dict[str, BatchKind] = {}
# What a layer above wants done with each kind (the API's webhooks and event log listen to its saves).
_on_register: list[Callable[[BatchKind], None]] = []


def each_kind(callback: Callable[[BatchKind], None]) -> None:
    """Call `callback` with every kind registered, now and whenever one registers later."""
    _on_register.append(callback)
    for kind in list(KINDS.values()):
        callback(kind)


def register(kind: BatchKind) -> BatchKind:
    """Make `kind` known to the runner (its inline loop and its Celery task), the sweep and the debates' wake."""
    KINDS[kind.kind] = kind
    for callback in _on_register:
        callback(kind)
    # On Celery a batch goes by its tick chain (`submit`), never by the runner's task: none is given.
    runner.register(kind.kind, kind.run_inline, None)
    runner.register_sweep(kind.sweep)
    return kind


# -- one pass ------------------------------------------------------------------------------------
def _pass(
    kind: BatchKind, batch_id: int, stalled_after: float | None, start: Callable[[int], None] | None
) -> tuple[schedule.Decision, bool]:
    """`advance`, and whether the batch is settled after it (as `is_settled` would say, without asking)."""
    stalled_after = settings.CHAOSLM_STALLED_AFTER if stalled_after is None else stalled_after
    start = start or _start_debate
    with transaction.atomic():
        batch = kind.model.objects.select_for_update().get(pk=batch_id)
        owner = batch.owner.username if batch.owner_id else None
        with logging_context.bound(**{kind.kind: batch_id, "owner": owner}):
            return _pass_locked(kind, batch, stalled_after, start)


def _pass_locked(
    kind: BatchKind, batch: Any, stalled_after: float, start: Callable[[int], None]
) -> tuple[schedule.Decision, bool]:
    batch_id = batch.pk
    if batch.status == RUNNING and _over_budget(batch):
        # Paused like the owner's pause: nothing new starts, the debates in flight stop at their next call
        # boundary, and the owner resumes it once the budget allows (`resume` refuses before).
        batch.status = PAUSED
        batch.save(update_fields=["status", "updated_at"])
        stop_debates(kind.debates(batch))
        logger.info("%s %s paused: its owner's monthly budget is spent", kind.kind, batch_id)
    jobs = kind.jobs(batch, stalled_after, open_only=True)
    decision = schedule.plan(within_owner_cap(batch.owner, settings_of(batch), jobs), jobs)
    memo: dict[str, Any] = {}
    started: list[int] = []
    for job in decision.create:
        try:
            debate_id = kind.create(batch, job, memo)
        except FormatError as error:
            # A persona that cannot take its seat (a provider deleted since): the job fails for good, the rest
            # go on, and the batch can settle (left startable, it would be tried on every pass, for ever).
            logger.warning("%s %s: %s cannot start: %s", kind.kind, batch_id, job, error)
            kind.give_up(job)
            continue
        if debate_id is not None:
            started.append(debate_id)
    for job in decision.retry:
        if kind.retry(job):
            started.append(kind.debate_of(job) or 0)
    started += [kind.debate_of(job) or 0 for job in decision.resume]
    for debate_id in started:
        if debate_id:
            start(debate_id)
    if decision.settled and batch.status == RUNNING:
        batch.status = COMPLETED
        batch.finished_at = timezone.now()
        batch.save(update_fields=["status", "finished_at", "updated_at"])
    # As `is_settled` would say now (the decision is the plan on this pass's rows), without another query.
    return decision, _settled(batch.status, lambda: decision.settled)


def _over_budget(batch: Any) -> bool:
    """Whether the batch's owner has spent their monthly budget (no spend is added up when they have none)."""
    return batch.owner_id is not None and costs.allowance(batch.owner).reached


def within_owner_cap(owner: Any, wanted: schedule.Settings, jobs: Sequence[schedule.Job]) -> schedule.Settings:
    """The batch's concurrency, less what the owner's other batches already run, so that one person's debates
    in batches stay within CHAOSLM_MAX_RUNNING_BATCH_DEBATES whatever number of tournaments and experiments they
    start."""
    if owner is None or limits.exempt(owner):
        return wanted
    here = sum(1 for job in jobs if job.status in schedule.IN_FLIGHT)
    elsewhere = max(0, debate_limits.running_in_batches(owner) - here)
    free = max(0, settings.CHAOSLM_MAX_RUNNING_BATCH_DEBATES - elsewhere)
    return dataclasses.replace(wanted, concurrency=min(wanted.concurrency, free))


def _settled(status: str, nothing_in_flight: Callable[[], bool]) -> bool:
    """The rule of `is_settled`, given the status and how to tell whether a cancelled one has work in flight."""
    if status == RUNNING:
        return False
    if status == CANCELLED:
        return nothing_in_flight()
    return True


# -- the runner (the only code here that knows where batches run) ---------------------------------
_wakers: dict[tuple[str, int], tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}


def submit(kind: BatchKind, batch_id: int) -> None:
    """Advance the batch on the configured runner until it settles, once the transaction commits."""
    if settings.CHAOSLM_RUNNER == "celery":
        token = secrets.token_hex(8)
        kind.model.objects.filter(pk=batch_id).update(tick_token=token, ticked_at=timezone.now())
        transaction.on_commit(lambda: _send(kind, batch_id, token))
    else:
        runner.submit(kind.kind, batch_id)


def _start_debate(debate_id: int) -> None:
    runner.submit("debate", debate_id)


def _wake(kind: BatchKind, batch_id: int) -> None:
    """One of the batch's debates finished: go on now rather than at the next tick."""
    if settings.CHAOSLM_RUNNER == "celery":
        transaction.on_commit(lambda: _send(kind, batch_id, ""))
    elif (kind.kind, batch_id) in _wakers:
        transaction.on_commit(lambda: _pass_here(kind, batch_id))


def _pass_here(kind: BatchKind, batch_id: int) -> None:
    """Inline: the pass runs right here, in the thread that stored the finished debate (the engine's database
    thread), and the debates it starts go straight to the runner's loop: the next one starts without a trip
    through the batch's loop and back. The loop itself wakes only when the batch settles."""
    found = _wakers.get((kind.kind, batch_id))
    if found is None:
        return
    loop, wake = found
    chosen: list[int] = []
    try:
        _, settled = _pass(kind, batch_id, None, chosen.append)
    except ObjectDoesNotExist:
        return  # deleted: its loop is cancelled, nothing to go on with
    except Exception:
        # The debate that finished must not fail for it: the loop's own pass goes on instead.
        logger.exception("%s %s: a pass after a debate finished failed", kind.kind, batch_id)
        settled = True
    for debate_id in chosen:
        # Submitted from here, its task is queued before the finished debate's own last steps (and asks the database
        # thread for its first before they do).
        runner.inline.submit("debate", debate_id)
    if settled:
        loop.call_soon_threadsafe(wake.set)


TASK = "batches.tasks.advance_batch"  # one tick of any kind of batch: (kind, batch_id, token)


def _send(kind: BatchKind, batch_id: int, token: str, countdown: float = 0) -> None:
    runner.celery_app().send_task(TASK, args=[kind.kind, batch_id, token], countdown=countdown)


# The inline loop pushes the batch's page at most this often (seconds) while it runs, and once as it settles:
# drawing the page costs more than a pass, and a pass runs each time one of its debates finishes.
PUSH_EVERY = 1.0


async def _run_inline(kind: BatchKind, batch_id: int) -> None:
    """The inline runner's loop for one batch: a pass and a push of its page, then wait for the next push (or
    tick, if sooner), or for a debate's pass (`_pass_here`) to say the batch settled."""
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    _wakers[(kind.kind, batch_id)] = (loop, wake)
    pushed_at = -math.inf
    try:
        while True:
            wake.clear()
            # The debates start once the pass has committed and returned, from the loop.
            chosen: list[int] = []
            _, settled = await sync_to_async(_beat_and_pass)(kind, batch_id, chosen.append)
            for debate_id in chosen:
                runner.inline.submit("debate", debate_id)
            if settled or loop.time() - pushed_at >= PUSH_EVERY:
                # Pushed from the loop, not from inside the pass: a pass runs in the loop's one sync thread.
                await live.push(kind.group(batch_id), await sync_to_async(kind.live_html)(batch_id))
                pushed_at = loop.time()
            if settled:
                return
            # Its debates finish, and start the next ones, outside this loop: it comes again when a push is due.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    wake.wait(), min(settings.CHAOSLM_BATCH_TICK, pushed_at + PUSH_EVERY - loop.time())
                )
    except ObjectDoesNotExist:
        logger.info("%s %s was deleted; its loop stops", kind.kind, batch_id)
    finally:
        _wakers.pop((kind.kind, batch_id), None)


def _beat_and_pass(kind: BatchKind, batch_id: int, start: Callable[[int], None]) -> tuple[schedule.Decision, bool]:
    """The inline loop's pass, noting the time of it as a Celery tick does (`ticked_at`): a loop whose process
    ended stops noting it, and the sweep starts the batch again (`sweep`)."""
    kind.model.objects.filter(pk=batch_id).update(ticked_at=timezone.now())
    return _pass(kind, batch_id, None, start)


def _tick(kind: BatchKind, batch_id: int, token: str) -> None:
    kind.advance(batch_id)
    kind.push(batch_id)
    if not token:
        return
    with transaction.atomic():
        batch = kind.model.objects.select_for_update().get(pk=batch_id)
        if batch.tick_token != token:
            return
        batch.ticked_at = timezone.now()
        if kind.is_settled(batch_id):
            batch.tick_token = ""
            batch.save(update_fields=["tick_token", "ticked_at"])
            return
        batch.tick_token = secrets.token_hex(8)
        batch.save(update_fields=["tick_token", "ticked_at"])
        following = batch.tick_token
        transaction.on_commit(lambda: _send(kind, batch_id, following, settings.CHAOSLM_BATCH_TICK))


def batch_of(debate: Debate) -> tuple[BatchKind, int] | None:
    """The kind and id of the batch `debate` belongs to, or None.

    What is found is kept on the instance: a debate joins its batch as it is made and never moves, so the hooks on
    one save of its end (the wake here, the API's batch events) ask the database once between them."""
    found = debate.__dict__.get("_batch_of")
    if found is not None and found[0] == debate.pk and found[1] in KINDS:
        return KINDS[found[1]], found[2]
    paths = {name: kind.paths_from_debate() for name, kind in KINDS.items()}
    every = [path for kind_paths in paths.values() for path in kind_paths]
    # One query over every kind's link (a debate is in one batch at most: one row, or none if it was deleted).
    row = Debate.objects.filter(pk=debate.pk).values(*every).first() if every else None
    for name, kind in KINDS.items():
        if paths[name]:
            batch_id = next((row[path] for path in paths[name] if row and row[path] is not None), None)
        else:
            batch_id = kind.of_debate(debate.pk)
        if batch_id is not None:
            debate.__dict__["_batch_of"] = (debate.pk, kind.kind, batch_id)
            return kind, batch_id
    return None


def _debate_saved(sender: type[Debate], instance: Debate, update_fields: Any = None, **_: Any) -> None:
    if update_fields is not None and "status" not in update_fields:
        return
    if not instance.in_batch:
        return  # not a batch's debate: no query to find out
    if instance.status not in (Debate.Status.COMPLETED, Debate.Status.ERROR, Debate.Status.INTERRUPTED):
        return
    found = batch_of(instance)
    if found is not None:
        _wake(*found)


def connect_signals() -> None:
    """A batch's debate that finishes wakes its batch (batches/apps.py, once a process)."""
    post_save.connect(_debate_saved, sender=Debate, dispatch_uid="batches.kinds.debate_saved")
