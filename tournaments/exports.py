"""CSV and JSON exports of a tournament's matches and ratings (the page's export links, the CLI's --json)."""

from __future__ import annotations

from typing import Any

from batches.templatetags.batch_tags import stated
from debates.selectors import usage_json
from tournaments import arena, results, state
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
    "decision",  # a debate its referees decided: the decision's rule and reason
    "referees",  # and each referee's vote, "Ann: for; Ben: against"
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

HUMAN_RATING_COLUMNS = ["rank", "name", "rating", "ci_low", "ci_high", "wins", "losses"]
HUMAN_JUDGE_COLUMNS = [
    "judge",
    "matches_compared",
    "agreed",
    "agreement",
    "agreement_ci_low",
    "agreement_ci_high",
    "kappa",
    "kappa_ci_low",
    "kappa_ci_high",
    "votes",
    "voters",
    "matches_voted",
    "votes_excluded",
]


def _cell(value: Any) -> Any:
    """A Figure as its number, or "—" and why there is none, as the page and `tournament report` say it."""
    if hasattr(value, "why"):
        return stated(value) if value.value is None else value.value
    return "" if value is None else value


def decision_words(decided: dict[str, Any] | None) -> str:
    """A referees' decision as its matches row gives it: "majority vote: 2 of 3 votes, more than half"."""
    if not decided:
        return ""
    return f"{decided['rule_words']}: {decided['reason']}"


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
                    decision_words(j["decision"]),
                    "; ".join(f"{r['judge']}: {r['winner'] or 'no answer'}" for r in j["referees"]),
                ]
            )
    return rows


def rating_rows(tournament: Tournament) -> list[list[Any]]:
    rows: list[list[Any]] = [RATING_COLUMNS]
    for rank, r in enumerate(results.report(tournament).ratings, start=1):
        rows.append([rank, *(_cell(getattr(r, c)) for c in RATING_COLUMNS[1:])])
    return rows


def human_rating_rows(tournament: Tournament) -> list[list[Any]]:
    """The debaters' ratings from the arena's human votes."""
    rows: list[list[Any]] = [HUMAN_RATING_COLUMNS]
    for rank, r in enumerate(arena.human_report(tournament).ratings, start=1):
        rows.append([rank, *(_cell(getattr(r, c)) for c in HUMAN_RATING_COLUMNS[1:])])
    return rows


def human_judge_rows(tournament: Tournament) -> list[list[Any]]:
    """Each LLM judge against the human majority, and on every row what the figures rest on."""
    report = arena.human_report(tournament)
    rows: list[list[Any]] = [HUMAN_JUDGE_COLUMNS]
    for j in report.judges:
        rows.append(
            [
                j.name,
                j.matches,
                j.agreed,
                _cell(j.agreement.value),
                _cell(j.agreement.low),
                _cell(j.agreement.high),
                _cell(j.kappa.value),
                _cell(j.kappa.low),
                _cell(j.kappa.high),
                report.votes,
                report.voters,
                report.matches,
                report.excluded,
            ]
        )
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
            "arena": tournament.arena,
        },
        "progress": {
            "total": progress.total,
            "done": progress.done,
            "running": progress.running,
            "failed": progress.failed,
        },
        "matches": results.matches(tournament),
        "cost": usage_json(results.debates_of(tournament)),
        # The arena's blind votes: counts and figures only, never who voted what.
        "human": arena.human_report(tournament).as_dict(),
    }
