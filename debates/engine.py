"""The engine: asks a debate's format for the steps that are ready, runs them, persists them.

`run_debate(debate_id)` is the one entry point, whatever runs it (the inline thread, a Celery
task, the command line). It keeps no state of its own beyond the tasks in flight: what to do
next is always recomputed from the persisted events, so running it again on a half-finished
debate continues it, and a step that lands twice is stored once (unique debate+ordinal).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.db import DatabaseError, IntegrityError, close_old_connections, connection, transaction
from django.utils import timezone

from chaoslm import logging_context, runner, tracing
from chaoslm.llm import (
    Callbacks,
    ChatResult,
    Endpoint,
    LLMBadResponse,
    LLMError,
    Policy,
    chat,
    marks,
    own_connections,
)
from debates import transcripts
from debates.formats import DebateConfig, Format, FormatError, Plan, Record, SeatInfo, Step
from debates.models import Debate, Event, Seat
from debates.records import record_of

logger = logging.getLogger("chaoslm.engine")


class Observer:
    """Receives what happens while a debate runs. The defaults do nothing.

    The sync hooks run on the engine's event loop for every token: they must only buffer.
    """

    def step_started(self, debate: Debate, step: Step) -> None:
        pass

    def cards_when_saved(self) -> bool:
        """Whether each event's card is rendered as the event is saved, and kept for every page that shows
        it (debates/event_cards.py), or left to the first page that does."""
        return True

    def wants_deltas(self, step: Step) -> bool:
        """Whether `delta` shows this step's text as it is written. If not, the reply is asked for whole,
        not streamed (chaoslm/llm/gateway.py): a stream costs more than twice the CPU to read."""
        return False

    def delta(self, debate: Debate, step: Step, text: str) -> None:
        pass

    def restart(self, debate: Debate, step: Step) -> None:
        pass

    def waiting(self, debate: Debate, step: Step, seconds: float, reason: str) -> None:
        pass

    def queued(self, debate: Debate, step: Step, ahead: int) -> None:
        """The step waits for the embedded model, `ahead` calls before it; 0 once the model is answering it."""

    def pace(self, debate: Debate, step: Step, tokens_per_second: float) -> None:
        """How fast the embedded model is writing this step's reply, now and then while it writes."""

    async def event_saved(self, debate: Debate, event: Event) -> None:
        pass

    async def debate_changed(self, debate: Debate) -> None:
        pass

    async def drain(self) -> None:
        """Called once as the run ends: flush anything still buffered."""


@dataclass
class _Table:
    """The debate as loaded once per run: seats and their endpoints, the format, the records."""

    debate: Debate
    fmt: Format
    seats: dict[str, Seat]
    infos: tuple[SeatInfo, ...]
    endpoints: dict[str, Endpoint]
    records: list[Record] = field(default_factory=list)
    # Ordinals holding an ERROR event from an earlier run: the step's success replaces it.
    failed_ordinals: set[int] = field(default_factory=set)

    def config(self, is_ending: bool) -> DebateConfig:
        d = self.debate
        return DebateConfig(
            format=d.format,
            topic=d.topic,
            premise=d.premise,
            material=d.material,
            options=d.options,
            seats=self.infos,
            is_ending=is_ending,
        )


def _load(debate_id: int) -> _Table:
    debate = Debate.objects.select_related("owner").get(pk=debate_id)
    seats = {s.key: s for s in debate.seats.all()}
    infos = tuple(
        SeatInfo(key=s.key, role=s.role, name=s.name, side=s.side, system_prompt=s.system_prompt, is_human=s.is_human)
        for s in seats.values()
    )
    endpoints = {key: s.llm_settings.endpoint() for key, s in seats.items() if not s.is_human}
    by_id = {s.pk: s.key for s in seats.values()}
    records: list[Record] = []
    failed: set[int] = set()
    for event in debate.events.all():
        if event.kind == Event.Kind.ERROR:
            failed.add(event.ordinal)
        else:
            records.append(record_of(event, by_id.get(event.seat_id)))
    return _Table(
        debate=debate,
        fmt=debate.fmt,
        seats=seats,
        infos=infos,
        endpoints=endpoints,
        records=records,
        failed_ordinals=failed,
    )


def _mark_running(debate: Debate) -> None:
    debate.status = Debate.Status.RUNNING
    debate.error_text = ""
    debate.runner = runner.identity()
    if debate.started_at is None:
        debate.started_at = timezone.now()
    debate.save(update_fields=["status", "error_text", "runner", "started_at", "updated_at"])


def _persist(
    debate: Debate,
    seat: Seat | None,
    step: Step,
    result: ChatResult | None,
    extra: dict[str, Any],
    replaces_error: bool = False,
    card: bool = True,
) -> Event:
    """Store a finished step; if its ordinal already holds an event, that one stands (it landed first).

    `card`: render the event's card now and keep it with the event (Event.save), else leave it to the first
    page that shows it."""
    data = {**step.data, **extra}
    fields: dict[str, Any] = {
        "seat": seat,
        "kind": step.kind,
        "step": step.step,
        "visibility": step.visibility,
        "prompt": step.prompt,
        "content": step.content,
        "data": data,
    }
    if result is not None:
        fields.update(
            content=result.text,
            tokens_in=result.prompt_tokens,
            tokens_out=result.completion_tokens,
            tokens_cached=result.cached_tokens,
            cost=result.cost,
            latency_ms=result.latency_ms,
            model=result.model,
        )
        if isinstance(result.data, dict):
            data.update(result.data)
        if result.words_before_truncation is not None:
            data["truncated_from_words"] = result.words_before_truncation
        # The reply stopped at its token cap and ends where it was cut: its card and exports say so.
        data.update(marks.cut_mark(result))
    try:
        # One INSERT is atomic by itself; a transaction around it would add two round trips (BEGIN, COMMIT).
        with transaction.atomic() if replaces_error else contextlib.nullcontext():
            if replaces_error:
                Event.objects.filter(debate=debate, ordinal=step.ordinal, kind=Event.Kind.ERROR).delete()
            event = Event(debate=debate, ordinal=step.ordinal, **fields)
            event.save(force_insert=True, card=card)
    except IntegrityError:
        event = Event.objects.get(debate=debate, ordinal=step.ordinal)
    # The web or the command line may set is_ending (End) or stop_requested (its batch paused or cancelled) at any
    # time; they matter when the next steps are chosen. Read once an event, so in SQL: building the ORM query
    # cost more than running it.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT is_ending, stop_requested FROM {Debate._meta.db_table} WHERE id = %s",  # noqa: S608
            [debate.pk],
        )
        row = cursor.fetchone()
    debate.is_ending = bool(row and row[0])
    debate.stop_requested = bool(row and row[1])
    return event


def _finish(table: _Table, config: DebateConfig) -> None:
    debate = table.debate
    outcome = table.fmt.outcome(config, table.records)
    for name, value in outcome.items():
        setattr(debate, name, value)
    debate.status = Debate.Status.COMPLETED
    debate.finished_at = timezone.now()
    # Named fields: a plain save() of a debate deleted under its run (a batch deleted while its worker finishes
    # the debate) finds no row to update and inserts it again; this raises instead, and the run stops as deleted.
    stored = [f.attname for f in Debate._meta.concrete_fields if f.attname in outcome]  # a ranking is not a column
    debate.save(update_fields=[*stored, "status", "finished_at", "updated_at"])


def _load_running(debate_id: int) -> _Table:
    """`_load`, then `_mark_running` unless the debate is over or held: one trip to the database thread, not two.
    A debate asked to stop is left interrupted instead: its run makes no call."""
    table = _load(debate_id)
    debate = table.debate
    if debate.status != Debate.Status.COMPLETED and not debate.held():
        if debate.stop_requested:
            _set_status(debate, Debate.Status.INTERRUPTED)
        else:
            _mark_running(debate)
    return table


def _set_status(debate: Debate, status: str) -> None:
    debate.status = status
    debate.save(update_fields=["status", "updated_at"])


class DebateDeleted(Exception):
    """The debate was deleted while it ran (or before it started): its run stops, with nothing to store."""


def _exists(debate_id: int) -> bool:
    return Debate.objects.filter(pk=debate_id).exists()


def _interrupt(debate: Debate) -> None:
    """A cancelled run leaves its debate resumable, unless cancelled because the debate is being deleted."""
    try:
        _set_status(debate, Debate.Status.INTERRUPTED)
    except DatabaseError:
        if _exists(debate.pk):
            raise


def _fail(table: _Table, message: str, step: Step | None = None, error_type: str = "") -> Event | None:
    """Mark the debate failed, keeping everything so far; the failed step's place gets an ERROR event."""
    debate = table.debate
    endpoint = table.endpoints.get(step.seat or "") if step else None
    model = endpoint.model if endpoint else ""
    logger.error(
        "debate %s failed: status=%s state=%s round=%s seat=%s model=%s error=%s",
        debate.pk,
        debate.status,
        step.data.get("state", "") if step else "",
        step.step if step else "",
        step.seat if step else "",
        model,
        message,
    )
    debate.status = Debate.Status.ERROR
    debate.error_text = message
    debate.save(update_fields=["status", "error_text", "updated_at"])
    event = None
    if step is not None:
        data = {"step": step.step, "kind": step.kind, "seat": step.seat or "", "model": model, "error_type": error_type}
        with transaction.atomic():
            event, _ = Event.objects.update_or_create(
                debate=debate,
                ordinal=step.ordinal,
                defaults={
                    "seat": table.seats.get(step.seat or ""),
                    "kind": Event.Kind.ERROR,
                    "step": step.step,
                    "content": message,
                    "data": data,
                    "visibility": Event.Visibility.PUBLIC,
                },
            )
    transcripts.save_partial(debate)
    return event


async def _call(
    table: _Table, step: Step, observer: Observer, policy: Policy | None
) -> tuple[ChatResult | None, dict[str, Any]]:
    assert step.seat is not None
    seat = table.seats[step.seat]
    debate = table.debate
    options = seat.llm_settings.options(
        json_schema=dict(step.json_schema) if step.json_schema is not None else None,
        word_limit=step.word_limit,
        # What a judge says is read as the debate's outcome: its prompt given back is no reply. Its JSON, and its
        # announcement; not a reply of one name (a winner confirmed, an answer chosen), which the prompt offered.
        reject_echo=(step.json_schema is not None and step.kind in ("SCORE", "INTERNAL", "VERDICT"))
        or (step.kind == "VERDICT" and step.step == "announce"),
    )
    callbacks = Callbacks(
        on_delta=(lambda text: observer.delta(debate, step, text)) if observer.wants_deltas(step) else None,
        on_restart=lambda: observer.restart(debate, step),
        on_wait=lambda seconds, reason: observer.waiting(debate, step, seconds, reason),
        on_queued=lambda ahead: observer.queued(debate, step, ahead),
        on_pace=lambda rate: observer.pace(debate, step, rate),
    )
    endpoint = table.endpoints[step.seat]
    # The reply names the embedded model that wrote it, as the call found it: the debate's pages and exports say so
    # from this (selectors.embedded_line), whatever the settings are by the time they are read.
    made_by = marks.made_by(endpoint)
    observer.step_started(debate, step)
    try:
        where = {"chaoslm.debate.id": debate.pk, "chaoslm.step": step.step, "chaoslm.seat": step.seat}
        with tracing.span(f"step {step.step}", **where):
            return await chat(endpoint, step.messages, options, policy=policy, callbacks=callbacks), made_by
    except LLMBadResponse as error:
        if not step.json_fallback and not error.echoed:
            raise
        if error.echoed and step.json_schema is None:
            # A judge's announcement that only gave its prompt back: the verdict stands, and nobody reads the
            # prompt as its words (the card says why it is empty).
            return ChatResult(text=""), {**made_by, "echoed": True, "error": str(error)}
        # After three invalid replies, fall back gracefully rather than fail: the format reads what it can.
        data: dict[str, Any] = {**made_by, "fallback": True, "error": str(error)}
        if error.echoed:
            data["echoed"] = True
        return ChatResult(text=error.last_text), data


@dataclass
class RunStats:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0


async def run_debate(
    debate_id: int, observer: Observer | None = None, *, policy: Policy | None = None, stats: RunStats | None = None
) -> Debate:
    """Run a debate until it completes, waits for a human, or fails. Safe to call again at any point."""
    async with own_connections():
        with tracing.span("debate run", **{"chaoslm.debate.id": debate_id}):
            return await _run(debate_id, observer or Observer(), policy, stats if stats is not None else RunStats())


async def _run(debate_id: int, observer: Observer, policy: Policy | None, stats: RunStats) -> Debate:
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    try:
        table = await sync_to_async(_load_running)(debate_id)
    except (Debate.DoesNotExist, DatabaseError):
        if await sync_to_async(_exists)(debate_id):
            raise
        raise DebateDeleted(debate_id) from None
    debate = table.debate
    # Every line logged from here on (the gateway's retries, a failure) names the debate and its owner.
    with logging_context.bound(debate=debate_id, owner=debate.owner.username if debate.owner else None):
        return await _run_loaded(table, observer, policy, stats, (wall_start, cpu_start))


async def _run_loaded(
    table: _Table, observer: Observer, policy: Policy | None, stats: RunStats, started: tuple[float, float]
) -> Debate:
    debate, debate_id = table.debate, table.debate.pk
    wall_start, cpu_start = started
    # A held debate (debates/hold.py) does not start before its start time, whatever asked for this run: its
    # start is scheduled for then.
    if debate.status == Debate.Status.COMPLETED or debate.held():
        return debate
    await observer.debate_changed(debate)
    if debate.stop_requested:
        logger.info("debate %s was asked to stop before it started; it stays interrupted", debate_id)
        return debate
    run = _Run(table, observer, policy, stats)
    try:
        while not await run.advance():
            pass
        return debate
    except asyncio.CancelledError:
        await _abort(run.running)
        await sync_to_async(_interrupt)(debate)
        raise
    except Exception as error:
        await _abort(run.running)
        if not await sync_to_async(_exists)(debate_id):
            # Deleted under the run (on a worker, which no one can cancel from the web): nothing is wrong.
            logger.info("debate %s was deleted while it ran; its run stops", debate_id)
            raise DebateDeleted(debate_id) from None
        # A bug, not a model failure: keep the transcript, say so plainly, and leave the trace to the log.
        logger.error("debate %s: internal error", debate_id, exc_info=error)
        await sync_to_async(_fail)(table, f"ChaosLM hit an internal error ({type(error).__name__}); see the log.")
        await observer.debate_changed(debate)
        return debate
    finally:
        await observer.drain()
        # As Django does at the end of a request: do not leave this thread's connection open for ever.
        await sync_to_async(close_old_connections)()
        stats.wall_seconds += time.perf_counter() - wall_start
        stats.cpu_seconds += time.process_time() - cpu_start


_Call = asyncio.Task[tuple[ChatResult | None, dict[str, Any]]]


class _Run:
    """One run of a debate: the steps in flight, and what happens when one lands."""

    def __init__(self, table: _Table, observer: Observer, policy: Policy | None, stats: RunStats) -> None:
        self.table = table
        self.debate = table.debate
        self.observer = observer
        self.policy = policy
        self.stats = stats
        self.running: dict[int, tuple[Step, _Call]] = {}
        self.done_ordinals = {r.ordinal for r in table.records}

    async def advance(self) -> bool:
        """Start what is ready, then land what finishes first; True once the run is over."""
        if self.debate.stop_requested:
            # Asked to stop (its batch paused or cancelled): no call starts; those in flight land, then it rests.
            if self.running:
                return await self._land_finished()
            logger.info("debate %s stopped as asked; it can be resumed", self.debate.pk)
            await sync_to_async(_set_status)(self.debate, Debate.Status.INTERRUPTED)
            await self.observer.debate_changed(self.debate)
            return True
        is_ending = self.debate.is_ending
        # When ending, let the steps in flight land first, so the format decides on a settled transcript.
        if not (is_ending and self.running):
            config = self.table.config(is_ending)
            try:
                plan = self.table.fmt.next_steps(config, self.table.records)
            except FormatError as error:
                await self._stop(str(error))
                return True
            progressed = await self._start(plan)
            if progressed and not self.running:
                return False
            if not self.running:
                await self._rest(plan, config)
                return True
        return await self._land_finished()

    async def _start(self, plan: Plan) -> bool:
        """Start a task for every ready step not already running; store steps with no call at once."""
        progressed = False
        for step in plan.steps:
            if self.debate.stop_requested:
                break  # read as a step with no call landed: the calls after it are not started
            if step.ordinal in self.running or step.ordinal in self.done_ordinals:
                continue
            if step.calls_llm:
                task = asyncio.create_task(_call(self.table, step, self.observer, self.policy))
                self.running[step.ordinal] = (step, task)
            else:
                await _land(self.table, step, None, {}, self.observer, self.done_ordinals)
                progressed = True
        return progressed

    async def _rest(self, plan: Plan, config: DebateConfig) -> None:
        """Nothing runs: the debate is finished, waits for a person, or the format is stuck."""
        if plan.finished:
            await sync_to_async(_finish)(self.table, config)
        elif plan.waiting_for:
            await sync_to_async(_set_status)(self.debate, Debate.Status.WAITING)
        else:
            raise RuntimeError(f"format {self.debate.format} has no step to run and is not finished")
        await self.observer.debate_changed(self.debate)

    async def _land_finished(self) -> bool:
        """Wait for the first steps in flight to finish and store them; True if one failed the debate."""
        finished, _ = await asyncio.wait(
            [task for _, task in self.running.values()], return_when=asyncio.FIRST_COMPLETED
        )
        for ordinal in [o for o, (_, task) in self.running.items() if task in finished]:
            step, task = self.running.pop(ordinal)
            try:
                result, extra = task.result()
            except LLMError as error:
                await self._stop(str(error), step, type(error).__name__)
                return True
            self.stats.calls += 1
            if result is not None:
                self.stats.tokens_in += result.prompt_tokens
                self.stats.tokens_out += result.completion_tokens
            await _land(self.table, step, result, extra, self.observer, self.done_ordinals)
        return False

    async def _stop(self, message: str, step: Step | None = None, error_type: str = "") -> None:
        """Fail the debate: cancel what runs, keep what landed, show the failed step's ERROR event."""
        await _abort(self.running)
        event = await sync_to_async(_fail)(self.table, message, step, error_type)
        if event is not None:
            await self.observer.event_saved(self.debate, event)
        await self.observer.debate_changed(self.debate)


async def _land(
    table: _Table,
    step: Step,
    result: ChatResult | None,
    extra: dict[str, Any],
    observer: Observer,
    done_ordinals: set[int],
) -> None:
    seat = table.seats.get(step.seat) if step.seat else None
    replaces_error = step.ordinal in table.failed_ordinals
    event = await sync_to_async(_persist)(
        table.debate, seat, step, result, extra, replaces_error, observer.cards_when_saved()
    )
    table.failed_ordinals.discard(step.ordinal)
    table.records.append(record_of(event, step.seat))
    done_ordinals.add(step.ordinal)
    await observer.event_saved(table.debate, event)


async def _abort(running: dict[int, Any]) -> None:
    tasks: Sequence[asyncio.Task[Any]] = [task for _, task in running.values()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    running.clear()
