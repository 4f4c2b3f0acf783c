"""A tournament's state, read from its rows: the jobs the scheduler decides on, its debates, their planned calls."""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import F, Q, QuerySet

from batches import schedule
from batches.progress import ProgressView, jobs_from_rows, progress_view, settings_of
from debates.models import Debate
from tournaments import design
from tournaments.models import Judgment, Match, Tournament


def jobs(tournament: Tournament, stalled_after: float | None = None, *, open_only: bool = False) -> list[schedule.Job]:
    """Every debate the tournament needs (a duel per match, a replay per other judgment), as it stands;
    with `stalled_after` (seconds), in-flight debates with no progress for that long are marked stalled.

    `open_only` leaves out the jobs whose debate completed, which a pass has nothing to decide about (a
    replay whose duel is not among the jobs may start): the plan is the same, and reading it costs the
    jobs left, not the whole tournament, on each of its passes. Its progress then counts open jobs only.

    Two queries, the matches and the replays; a third, the newest event of the debates in flight for
    longer than `stalled_after`, tells a stalled one (its worker died) from a slow one."""
    # A job's own fields, then its debate's, under the same names for both kinds.
    fields = (
        "id",
        "attempts",
        "debate_id",
        "debate__status",
        "debate__created_at",
        "debate__started_at",
        "debate__runner",
    )
    matches = Match.objects.filter(tournament=tournament)
    replays = Judgment.objects.filter(match__tournament=tournament, in_debate=False)
    if open_only:
        matches = matches.exclude(debate__status=schedule.COMPLETED)
        replays = replays.exclude(debate__status=schedule.COMPLETED)
    rows = [(schedule.MATCH, row) for row in matches.values(*fields, job_match=F("id"), job_order=F("order"))] + [
        (schedule.REPLAY, row) for row in replays.values(*fields, job_match=F("match_id"), job_order=F("match__order"))
    ]
    return jobs_from_rows(rows, stalled_after)


def progress(tournament: Tournament) -> ProgressView:
    """Done, running and failed debates, from the jobs; the ETA from the pace of the model calls so far."""
    return progress_view(jobs(tournament), settings_of(tournament), debates_of(tournament), planned_calls(tournament))


def debates_of(tournament: Tournament) -> QuerySet[Debate]:
    """The tournament's debates: its duels and its judges' replays."""
    return Debate.objects.filter(
        Q(tournament_match__tournament=tournament) | Q(tournament_judgment__match__tournament=tournament)
    )


def planned_calls(tournament: Tournament) -> Callable[[schedule.Job], int]:
    """A tournament's job's model calls: its match's debate's (its format's `calls`), or a judge's replay of it.
    The matches' formats are read (one query) only in a tournament of more than one format."""
    options = tournament.options
    planned = {
        (name, kind): (design.debate_calls if kind == schedule.MATCH else design.replay_calls)(
            tournament.format_of(name), options
        )
        for name in tournament.formats
        for kind in (schedule.MATCH, schedule.REPLAY)
    }
    formats: dict[int, str] = {}

    def calls(job: schedule.Job) -> int:
        if len(tournament.formats) == 1:
            return planned[(tournament.formats[0], job.kind)]
        if not formats:
            formats.update(Match.objects.filter(tournament=tournament).values_list("id", "format"))
        return planned[(formats[job.match], job.kind)]

    return calls
