"""CSV and JSON exports of a tournament's matches and ratings (the page's export links, the CLI's --json)."""

from __future__ import annotations

from typing import Any

from tournaments import results, state
from tournaments.models import Tournament

MATCH_COLUMNS = [
    "match",
    "question",
    "topic",
    "premise",
    "correct",
    "debater_for",
    "debater_against",
    "judge",
    "repeat",
    "debate",
    "status",
    "winner",
    "winner_name",
    "score_for",
    "score_against",
    "contradicts",
]
RATING_COLUMNS = [
    "rank",
    "name",
    "rating",
    "ci_low",
    "ci_high",
    "wins",
    "losses",
    "wins_for",
    "losses_for",
    "win_rate_for",
    "wins_against",
    "losses_against",
    "win_rate_against",
]


def _cell(value: Any) -> Any:
    """A Figure as its number, or "undefined" (its reason is in the JSON export)."""
    if hasattr(value, "why"):
        return "undefined" if value.value is None else value.value
    return "" if value is None else value


def match_rows(tournament: Tournament) -> list[list[Any]]:
    """One row per judgment: each match appears once per judge and repeat."""
    rows: list[list[Any]] = [MATCH_COLUMNS]
    for m in results.matches(tournament):
        for j in m["judgments"]:
            rows.append(
                [
                    m["match"],
                    m["question"],
                    m["topic"],
                    m["premise"],
                    m["correct"] or "",
                    m["debater_for"],
                    m["debater_against"],
                    j["judge"],
                    j["repeat"],
                    j["debate"] or "",
                    j["status"],
                    j["winner"] or "",
                    j["winner_name"],
                    _cell(j["score_for"]),
                    _cell(j["score_against"]),
                    j["contradicts"],
                ]
            )
    return rows


def rating_rows(tournament: Tournament) -> list[list[Any]]:
    rows: list[list[Any]] = [RATING_COLUMNS]
    for rank, r in enumerate(results.report(tournament).ratings, start=1):
        rows.append([rank, *(_cell(getattr(r, c)) for c in RATING_COLUMNS[1:])])
    return rows


def as_json(tournament: Tournament) -> dict[str, Any]:
    """The final report as plain JSON: the tournament, its progress, matches, ratings, judges, panel."""
    progress = state.progress(tournament)
    report = results.report(tournament).as_dict()
    # The report counts the matches it rates; the export lists them all, as they stand.
    report["matches_rated"] = report.pop("matches")
    return {
        **report,
        "tournament": {
            "id": tournament.pk,
            "name": tournament.name,
            "status": tournament.status,
            "format": tournament.format,
            "options": tournament.options,
            "sides": tournament.sides,
            "repeats": tournament.repeats,
            "concurrency": tournament.concurrency,
        },
        "progress": {
            "total": progress.total,
            "done": progress.done,
            "running": progress.running,
            "failed": progress.failed,
        },
        "matches": results.matches(tournament),
    }
