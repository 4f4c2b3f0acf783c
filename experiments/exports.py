"""CSV and JSON exports of an experiment: its runs as judged and its report (the page's links, the CLI's --json).

A CSV cell that a spreadsheet would read as a formula (it starts with =, +, -, @, a tab or a carriage
return) is written with a leading apostrophe: a model's or a person's text must not run in whoever opens it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chaoslm.charts import NO_FIGURE
from debates.selectors import usage_json
from experiments import arena, design, selectors
from experiments.models import Experiment

# The report's statistics (experiments/stats.py, batches/stats.py: a score of frozen dataclasses, each built at
# import) load at a process's first report, not with every command.
if TYPE_CHECKING:
    from experiments import stats

RUN_COLUMNS = [
    "run",
    "question",
    "protocol",
    "judge",
    "order",
    "correct",
    "argues_answer_0",
    "argues_answer_1",
    "consultant_answer",
    "p_answer_0",
    "p_answer_1",
    "choice",
    "score",
    "quotes",
    "verified",
    "unverified",
    "debate_of_run",
]
PROTOCOL_COLUMNS = ["protocol", "runs", "unparsed", "accuracy", "ci_low", "ci_high", "questions", "brier"]
# Counts only: who answered what is never exported.
HUMAN_COLUMNS = ["who", "answers", "voters", "debates", "excluded", "accuracy", "ci_low", "ci_high"]


def _cell(value: Any) -> Any:
    """A Figure or an Estimate as its number, or "—" (the reason is in the JSON export)."""
    if hasattr(value, "why"):
        return NO_FIGURE if value.value is None else value.value
    return "" if value is None else value


def run_rows(judged: list[stats.Judged]) -> list[list[Any]]:
    rows: list[list[Any]] = [RUN_COLUMNS]
    for r in judged:
        quotes = {"quotes": 0, "verified": 0, "unverified": 0}
        for counts in r.quotes.values():
            for key, value in counts.items():
                quotes[key] += value
        rows.append(
            [
                r.run,
                r.question,
                r.protocol,
                r.judge,
                "B first" if r.swapped else "A first",
                _cell(r.correct),
                r.first if design.debated(r.protocol) else "",
                r.second or "",
                f"{r.first}: {r.assigned}" if design.consulted(r.protocol) else "",
                r.probabilities[0] if r.probabilities else "unparsed",
                r.probabilities[1] if r.probabilities else "unparsed",
                _cell(r.choice),
                _cell(r.score),
                *(("", "", "") if r.source else (quotes["quotes"], quotes["verified"], quotes["unverified"])),
                r.source or r.run,
            ]
        )
    return rows


def protocol_rows(report: stats.Report) -> list[list[Any]]:
    rows: list[list[Any]] = [PROTOCOL_COLUMNS]
    for p in report.protocols:
        a = p.accuracy
        rows.append(
            [p.protocol, p.runs, p.unparsed, _cell(a), _cell(a.low), _cell(a.high), a.questions, _cell(p.brier)]
        )
    return rows


def human_rows(human: stats.HumanAccuracy) -> list[list[Any]]:
    """The people's row (their counted answers, the people and debates they cover, the answers kept but not
    counted), then each judge's on the same debates."""
    from experiments import stats

    a = human.accuracy
    rows: list[list[Any]] = [
        HUMAN_COLUMNS,
        [
            stats.HUMANS,
            human.votes,
            human.voters,
            human.debates,
            human.excluded,
            _cell(a.value),
            _cell(a.low),
            _cell(a.high),
        ],
    ]
    for j in human.judges:
        a = j.accuracy
        rows.append([j.name, j.runs, "", j.debates, "", _cell(a.value), _cell(a.low), _cell(a.high)])
    return rows


def as_json(experiment: Experiment) -> dict[str, Any]:
    """The report as plain JSON (every undefined figure null, with why), the experiment, its progress, its runs."""
    judged = selectors.judged(experiment)
    progress = selectors.progress(experiment)
    return {
        "experiment": {
            "id": experiment.pk,
            "name": experiment.name,
            "status": experiment.status,
            "protocols": experiment.protocols,
            "options": experiment.options,
            "concurrency": experiment.concurrency,
            "arena": experiment.arena,
        },
        "progress": {
            "total": progress.total,
            "done": progress.done,
            "running": progress.running,
            "failed": progress.failed,
        },
        "report": selectors.report(experiment, judged).as_dict(),
        "human": arena.human_report(experiment, judged).as_dict(),
        "runs": [dict(zip(RUN_COLUMNS, row, strict=True)) for row in run_rows(judged)[1:]],
        "cost": usage_json(selectors.debates_of(experiment)),
    }
