"""Reading a comparison: its jobs for the scheduler, its progress, and each finished run as the report reads it
(its decided answer graded against the gold one, its spend, its rounds, its agents' answers before and after)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.db.models import Count, F, Q, QuerySet, Sum

from batches import schedule
from batches.progress import ProgressView, jobs_from_rows, progress_view, settings_of
from comparisons.arms import calls_of, rounds_cap
from comparisons.models import Comparison, Question, Run
from comparisons.question_sets import GoldQuestion, answer_key, grade, number
from debates.formats import get_format
from debates.formats.base import Format
from debates.formats.card.decide import given
from debates.models import Debate, Event

# The report's statistics (comparisons/compare_stats.py, batches/stats.py: frozen dataclasses, each built at import)
# load at a process's first report, not with every command.
if TYPE_CHECKING:
    from comparisons import compare_stats


def jobs(comparison: Comparison, stalled_after: float | None = None, *, open_only: bool = False) -> list[schedule.Job]:
    """Every run's debate as it stands: each run is its own MATCH (nothing waits for another).

    `open_only` is what a pass reads: the runs whose debate is made and not completed, and of the runs with none
    only the first that may still start, as many as the comparison's concurrency (a pass starts no more, and
    starts them in order). The plan is the same, and a pass after each finished debate reads what is in flight,
    not every run of the comparison left to start. Its progress then counts those runs only."""
    runs = Run.objects.filter(comparison=comparison)
    if open_only:
        made = runs.filter(debate__isnull=False).exclude(debate__status=schedule.COMPLETED)
        # A run with no debate and its attempts used up failed for good (schedule.plan): it starts nothing.
        waiting = runs.filter(debate__isnull=True, attempts__lt=schedule.MAX_ATTEMPTS)[: max(comparison.concurrency, 1)]
        found = [*_job_rows(made), *_job_rows(waiting)]
    else:
        found = _job_rows(runs)
    return jobs_from_rows([(schedule.MATCH, row) for row in found], stalled_after)


def _job_rows(runs: QuerySet[Run]) -> list[dict[str, Any]]:
    fields = (
        "id",
        "attempts",
        "debate_id",
        "debate__status",
        "debate__created_at",
        "debate__started_at",
        "debate__runner",
    )
    return list(runs.values(*fields, job_order=F("order"), job_match=F("id")))


def debates_of(comparison: Comparison) -> QuerySet[Debate]:
    return Debate.objects.filter(comparison_run__comparison=comparison)


def arm_format(arm: dict[str, Any]) -> Format:
    return get_format(arm["format"], arm.get("card_source", ""))


def arm_calls(arm: dict[str, Any]) -> tuple[int, int]:
    """(fewest, most) calls of one debate of a stored arm."""
    return calls_of(arm_format(arm), arm["options"], arm["seats"])


def planned_calls(comparison: Comparison) -> Callable[[schedule.Job], int]:
    """A job's most model calls, by its run's arm (the runs' arms read once, when an ETA is worked out)."""
    most = [arm_calls(arm)[1] for arm in comparison.arms]
    arms: dict[int, int] = {}

    def calls(job: schedule.Job) -> int:
        if not arms:
            arms.update(Run.objects.filter(comparison=comparison).values_list("id", "arm"))
        return most[arms[job.id]]

    return calls


def progress(comparison: Comparison) -> ProgressView:
    return progress_view(jobs(comparison), settings_of(comparison), debates_of(comparison), planned_calls(comparison))


def gold(question: Question) -> GoldQuestion:
    """A stored question as the grading reads it."""
    value = number(question.answer) if question.kind == "numeric" else None
    return GoldQuestion(
        id=question.ident,
        question=question.question,
        kind=question.kind,
        answer=question.answer,
        choices=tuple(question.choices),
        material=question.material,
        value=value,
    )


@dataclass(frozen=True)
class Finished:
    """A run whose debate completed: its question and arm, the decided answer and the report's reading of it."""

    run: int
    order: int
    question: str  # the question's id
    question_text: str
    gold: str
    arm: str
    debate: int
    decided: Any  # the decision's answer as the debate gave it (None: no answer)
    rule: str
    stats: compare_stats.Run


def _answers(question: GoldQuestion, events: list[dict[str, Any]]) -> tuple[tuple[compare_stats.Answer, ...], ...]:
    """Each agent's answer in the first round of answers, and each agent's latest: (first, final)."""
    answering = [e for e in events if e["data"].get("answer_kind")]
    if not answering:
        return (), ()

    from comparisons import compare_stats

    def answer(e: dict[str, Any]) -> compare_stats.Answer:
        said = given(e["data"])
        return compare_stats.Answer(answer_key(question, said), grade(question, said))

    first_round = min(e["data"].get("round", 0) for e in answering)
    first = tuple(answer(e) for e in answering if e["data"].get("round", 0) == first_round)
    latest: dict[Any, dict[str, Any]] = {}
    for e in answering:
        latest[e["seat"]] = e
    return first, tuple(answer(e) for e in latest.values())


def finished(comparison: Comparison) -> list[Finished]:
    """Every run whose debate completed, as the report reads it: three queries (the runs, their events that
    answer, decide or stop, and their calls' totals)."""
    from comparisons import compare_stats

    rows = list(
        Run.objects.filter(comparison=comparison, debate__status=Debate.Status.COMPLETED)
        .select_related("question", "debate")
        .order_by("order")
    )
    debate_ids = [r.debate_id for r in rows]
    events: dict[int, list[dict[str, Any]]] = defaultdict(list)
    decisions: dict[int, dict[str, Any]] = {}
    stops: dict[int, int] = {}
    found = (
        Event.objects.filter(debate_id__in=debate_ids)
        .filter(Q(kind=Event.Kind.TURN) | Q(kind=Event.Kind.SYSTEM, step__in=["decision", "stop"]))
        .order_by("debate_id", "ordinal")
        .values("debate_id", "kind", "step", "seat_id", "data")
    )
    for e in found:
        data = e["data"] or {}
        if e["kind"] == Event.Kind.SYSTEM and e["step"] == "decision" and isinstance(data.get("decision"), dict):
            decisions[e["debate_id"]] = data["decision"]
        elif e["kind"] == Event.Kind.SYSTEM and e["step"] == "stop" and data.get("check") == "stop":
            stops[e["debate_id"]] = int(data.get("round") or 0)
        elif e["kind"] == Event.Kind.TURN:
            events[e["debate_id"]].append({"seat": e["seat_id"], "data": data})
    spend = {
        row["debate_id"]: row
        for row in Event.objects.filter(debate_id__in=debate_ids, tokens_in__gt=0)
        .values("debate_id")
        .annotate(
            calls=Count("pk"),
            t_in=Sum("tokens_in"),
            t_out=Sum("tokens_out"),
            amount=Sum("cost"),
            unknown=Count("pk", filter=Q(cost__isnull=True)),
        )
    }
    arms = comparison.arms
    caps = [rounds_cap(arm_format(arm), arm["options"]) for arm in arms]
    out = []
    for run in rows:
        question = gold(run.question)
        decision = decisions.get(run.debate_id) or {}
        decided = decision.get("answer")
        correct = grade(question, decided)
        first, final = _answers(question, events[run.debate_id])
        used = spend.get(run.debate_id) or {}
        cap = caps[run.arm]
        debate = run.debate
        wall = (
            (debate.finished_at - debate.started_at).total_seconds() if debate.started_at and debate.finished_at else 0
        )
        cost = None if used.get("unknown") else float(used.get("amount") or Decimal(0))
        stats = compare_stats.Run(
            question_id=question.id,
            arm=arms[run.arm]["name"],
            answer=answer_key(question, decided),
            correct=correct,
            calls=used.get("calls", 0),
            tokens=(used.get("t_in") or 0) + (used.get("t_out") or 0),
            cost=cost,
            wall_s=wall,
            rounds_run=None if cap is None else stops.get(run.debate_id, cap),
            rounds_cap=cap,
            first_answers=first if len(first) > 1 else (),
            final_answers=final if len(final) > 1 else (),
        )
        out.append(
            Finished(
                run=run.pk,
                order=run.order,
                question=question.id,
                question_text=question.question,
                gold=question.answer,
                arm=arms[run.arm]["name"],
                debate=run.debate_id,
                decided=decided,
                rule=str(decision.get("rule", "")),
                stats=stats,
            )
        )
    return out


def run_rows(comparison: Comparison, runs: Iterable[Run], done: list[Finished]) -> list[Run]:
    """`runs` as the runs table shows them: each with its arm's name (`arm_name`) and, once its debate completed,
    what it answered and whether that was right (`finished`)."""
    by_run = {f.run: f for f in done}
    names = [arm["name"] for arm in comparison.arms]
    rows = list(runs)
    for run in rows:
        run.finished = by_run.get(run.pk)
        run.arm_name = names[run.arm]
    return rows


def report(comparison: Comparison, runs: list[Finished] | None = None) -> compare_stats.Report:
    """The report over the finished runs so far (it fills as they finish)."""
    from comparisons import compare_stats

    done = finished(comparison) if runs is None else runs
    return compare_stats.compare([f.stats for f in done], [arm["name"] for arm in comparison.arms])
