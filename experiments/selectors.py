"""Reading an experiment: its jobs for the scheduler, its progress, and the judged runs the report is built from."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.db.models import F, QuerySet
from django.db.models.functions import Coalesce

from batches import schedule
from batches.progress import ProgressView, jobs_from_rows, progress_view, settings_of
from debates.formats.evidence import asks_nothing, read_answer
from debates.formats.quotes import verify
from debates.models import Debate, Event
from experiments import charts, design
from experiments.models import Experiment, Participant, Run

# The report's statistics (experiments/stats.py, batches/stats.py: a score of frozen dataclasses, each built at
# import) load at a process's first report, not with every command.
if TYPE_CHECKING:
    from experiments import stats


def jobs(experiment: Experiment, stalled_after: float | None = None, *, open_only: bool = False) -> list[schedule.Job]:
    """Every run's debate as it stands (see tournaments/state.py `jobs`: the same reading, one query for the runs).

    A run holding its own debate is the scheduler's MATCH (its match is itself); a run reading another's is a
    REPLAY of that run (its match is the source), so it waits for that debate to finish and fails with it."""
    fields = (
        "id",
        "attempts",
        "debate_id",
        "debate__status",
        "debate__created_at",
        "debate__started_at",
        "debate__runner",
    )
    runs = Run.objects.filter(experiment=experiment)
    if open_only:
        runs = runs.exclude(debate__status=schedule.COMPLETED)
    rows = [
        (schedule.REPLAY if row["source_id"] else schedule.MATCH, row)
        for row in runs.values(*fields, "source_id", job_order=F("order"), job_match=Coalesce("source_id", "id"))
    ]
    return jobs_from_rows(rows, stalled_after)


def debates_of(experiment: Experiment) -> QuerySet[Debate]:
    """The experiment's debates: its runs' own and its panels' replays."""
    return Debate.objects.filter(experiment_run__experiment=experiment)


def progress(experiment: Experiment) -> ProgressView:
    """Done, running and failed runs; the ETA from the pace of the model calls so far, as a tournament's."""
    return progress_view(jobs(experiment), settings_of(experiment), debates_of(experiment), planned_calls(experiment))


def judged(experiment: Experiment) -> list[stats.Judged]:
    """Every run whose debate completed, as the report reads it. Two queries: the runs, then their judges'
    answers and speakers' speeches."""
    from experiments import stats

    runs = list(
        Run.objects.filter(experiment=experiment, debate__status=Debate.Status.COMPLETED)
        .select_related("question", "judge", "first", "second")
        .order_by("order")
    )
    texts: dict[int, dict[str, str]] = defaultdict(dict)
    speeches: dict[int, list[tuple[str, str]]] = defaultdict(list)
    questions: dict[int, list[str]] = defaultdict(list)  # a consultancy judge's replies when it could ask
    events = (
        Event.objects.filter(debate_id__in=[r.debate_id for r in runs], kind__in=["VERDICT", "TURN"])
        .order_by("debate_id", "ordinal")
        .values_list("debate_id", "kind", "step", "seat__key", "content")
    )
    for debate_id, kind, step, seat, content in events:
        if kind == "VERDICT" and seat == "judge":
            texts[debate_id][step] = content
        elif kind == "TURN" and seat != "judge":
            speeches[debate_id].append((seat, content))
        elif kind == "TURN" and step == "question":
            questions[debate_id].append(content)
    out = []
    for run in runs:
        answer = read_answer(texts[run.debate_id].get("answer"), texts[run.debate_id].get("answer_again"))
        probabilities = None
        if answer is not None and answer.probabilities is not None:
            shown = (answer.probabilities["A"], answer.probabilities["B"])
            probabilities = (shown[1], shown[0]) if run.swapped else shown
        names = _speakers(run)
        quotes: dict[str, dict[str, int]] = {}
        for seat, content in speeches[run.debate_id]:
            counts = quotes.setdefault(names[seat], {"quotes": 0, "verified": 0, "unverified": 0})
            for key, value in verify(run.question.passage, content).counts().items():
                counts[key] += value
        out.append(
            stats.Judged(
                run=run.pk,
                question=run.question.index,
                protocol=run.protocol,
                judge=run.judge.name,
                swapped=run.swapped,
                correct=run.question.correct,
                probabilities=probabilities,
                first=run.first.name if run.first else None,
                second=run.second.name if run.second else None,
                assigned=run.assigned,
                quotes=quotes,
                source=run.source_id,
                asked=(
                    (sum(not asks_nothing(q) for q in questions[run.debate_id]), len(questions[run.debate_id]))
                    if run.protocol == design.CONSULTANCY
                    else None
                ),
            )
        )
    return out


def _speakers(run: Run) -> dict[str, str]:
    """Seat key -> the speaker's name, for the run's order."""
    if run.protocol == design.DEBATE and run.first and run.second:
        a, b = design.seats(run.first, run.second, run.swapped)
        return {"a": a.name, "b": b.name}
    if run.protocol == design.CONSULTANCY and run.first:
        return {"consultant": run.first.name}
    return {}


def report_context(experiment: Experiment, runs: list[stats.Judged] | None = None) -> dict[str, Any]:
    """What the report partial draws: the report over `runs` (by default, every run judged so far), its charts."""
    found = report(experiment, runs)
    return {
        "report": found,
        "bars": charts.accuracy_bars(found),
        "reliability": charts.reliability(found),
        # Its report's columns on consultants, when one of its protocols has one.
        "consulted": any(design.consulted(p) for p in experiment.protocols),
    }


def report(
    experiment: Experiment, runs: list[stats.Judged] | None = None, *, bootstrap: int | None = None
) -> stats.Report:
    """The report over `runs` (by default, every run judged so far), with `bootstrap` replicates (by default
    stats.BOOTSTRAP)."""
    from experiments import stats

    names = defaultdict(list)
    for role, name in experiment.participants.order_by("role", "order").values_list("role", "name"):
        names[role].append(name)
    return stats.build_report(
        judged(experiment) if runs is None else runs,
        experiment.protocols,
        names[Participant.Role.DEBATER],
        names[Participant.Role.JUDGE],
        bootstrap=stats.BOOTSTRAP if bootstrap is None else bootstrap,
    )


def planned_calls(experiment: Experiment) -> Callable[[schedule.Job], int]:
    """A job's model calls (design.planned_calls): a judge-only replay's, or its run's protocol's under the
    experiment's options. The runs' protocols are read (one query) only if a job that is no replay is asked about:
    only while an ETA is worked out."""
    per_protocol = {p: design.planned_calls(p, experiment.options, replay=False) for p in design.PROTOCOLS}
    # A panel's replay is of an evidence debate.
    replay = design.planned_calls(design.DEBATE, experiment.options, replay=True)
    protocols: dict[int, str] = {}

    def calls(job: schedule.Job) -> int:
        if job.kind == schedule.REPLAY:
            return replay
        if not protocols:
            protocols.update(Run.objects.filter(experiment=experiment).values_list("id", "protocol"))
        return per_protocol[protocols[job.id]]

    return calls
