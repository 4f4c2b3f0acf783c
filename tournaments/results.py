"""What a tournament has produced so far: its verdicts, the report built from them, tokens per persona,
and the matches table. Reads rows; the numerics are tournaments/stats.py's."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from django.core.cache import cache
from django.db.models import Count, Max, Q, QuerySet

from debates.formats import Format
from debates.formats.card.decide import RULE_WORDS
from debates.formats.duel import outscored_by
from debates.models import Debate
from debates.selectors import PersonaUsage, decision, ranked_sides, referee_votes, usage_of, winner_stance
from tournaments import design
from tournaments.design import pairwise
from tournaments.models import Entrant, Judgment, Match, Tournament

# The report's statistics (tournaments/stats.py, batches/stats.py: a score of frozen dataclasses, each built at
# import) load at a process's first report, not with every command.
if TYPE_CHECKING:
    from tournaments.stats import Report, Verdict


def _side(name: str, debater_for: str, debater_against: str, debate_id: int | None = None) -> str | None:
    if name == debater_for:
        return "for"
    if name == debater_against:
        return "against"
    # A team names neither entrant: its verdict names the team's label, a replay its speakers together.
    if name and debate_id is not None:
        return winner_stance(Debate.objects.get(pk=debate_id)) or None
    return None


def contradicts(winner: str, scores: Any) -> bool:
    """Whether the verdict's own scores put the other side above its winner (as `Debate.contradicts`)."""
    return isinstance(scores, dict) and outscored_by(winner, scores) is not None


def verdicts(tournament: Tournament) -> list[Verdict]:
    """One verdict per completed judgment (the duel's own judge, the replays), in match order. One query."""
    from tournaments.stats import Verdict

    rows = (
        Judgment.objects.filter(match__tournament=tournament, debate__status=Debate.Status.COMPLETED)
        .order_by("match__order", "judge__order", "repeat")
        .values_list(
            "match__debate_id",
            "match__question__index",
            "match__question__correct",
            "judge__name",
            "repeat",
            "match__debater_for__name",
            "match__debater_against__name",
            "debate__winner",
            "debate__scores",
            "match__format",
            "match__sides",
            "debate_id",
        )
    )
    out = []
    names: dict[int, str] = {}
    refereed = {name: design.refereed(tournament.format_of(name)) for name in tournament.formats}
    for row in rows:
        *verdict, sides, debate = row
        duel, question, correct, judge, repeat, name_for, name_against, winner, scores, format_name = verdict
        if sides:
            if not names:
                names.update(Entrant.objects.filter(tournament=tournament).values_list("pk", "name"))
            entrants = [names[s] for s in sides]
            out += _pairwise_verdicts(debate, duel, question, judge, repeat, entrants, format_name)
            continue
        scores = scores or {}
        score_for, score_against = scores.get(name_for), scores.get(name_against)
        out.append(
            Verdict(
                match=duel,
                question=question,
                judge=judge,
                repeat=repeat,
                debater_for=name_for,
                debater_against=name_against,
                winner=_side(winner, name_for, name_against, debate),
                correct=correct or None,
                score_for=float(score_for) if isinstance(score_for, int | float) else None,
                score_against=float(score_against) if isinstance(score_against, int | float) else None,
                contradicts=contradicts(winner, scores),
                format=format_name,
                ballots=_ballots(debate, duel, question, correct, name_for, name_against, format_name)
                if refereed.get(format_name)
                else (),
            )
        )
    return out


def _ballots(
    debate_id: int, match: int, question: int, correct: str, name_for: str, name_against: str, format_name: str
) -> tuple[Verdict, ...]:
    """A debate its referees decided: each referee's vote as that judge's own verdict (no scores)."""
    # Here, not at the top: the statistics load numpy and scipy, which no page or command needs at startup.
    from tournaments.stats import SIDES, Verdict

    return tuple(
        Verdict(
            match=match,
            question=question,
            judge=vote.referee,
            repeat=0,
            debater_for=name_for,
            debater_against=name_against,
            winner=vote.stance if vote.stance in SIDES else None,
            correct=correct or None,
            format=format_name,
        )
        for vote in referee_votes(Debate.objects.get(pk=debate_id))
    )


def _pairwise_verdicts(
    debate_id: int, match: int, question: int, judge: str, repeat: int, entrants: list[str], format_name: str
) -> list[Verdict]:
    """A ranking of N teams as the N(N-1)/2 pairwise results it implies: for each two sides, the better ranked
    one's entrant beats the other's (as FOR, the side first in the format's order; no scores, no known correct side).
    The ranking is the verdict's own (debates.selectors.ranked_sides)."""
    from tournaments.stats import Verdict

    ranking = [side.index for side in ranked_sides(Debate.objects.get(pk=debate_id))]
    return [
        Verdict(
            match=match,
            question=question,
            judge=judge,
            repeat=repeat,
            debater_for=entrants[min(a, b)],
            debater_against=entrants[max(a, b)],
            winner="for" if a < b else "against",
            correct=None,
            format=format_name,
        )
        for a, b in pairwise(ranking)
    ]


def teams(match: Match, fmt: Format, names: dict[int, str]) -> list[dict[str, Any]]:
    """A match of more than two teams: each team with its entrant and its seats, best first once its judge has
    ranked them (its place, and the pairwise results its place implies: teams ranked below it won, above it lost),
    else in its format's side order."""
    labels = {s.key: s.label for s in fmt.seat_specs}
    ranked = ranked_sides(match.debate) if match.debate is not None else []
    order = [(r.index, r) for r in ranked] or [(i, None) for i in range(len(fmt.sides))]
    return [
        {
            "place": r.ordinal if r else "",
            "label": fmt.sides[index].label,
            "entrant": names.get(match.sides[index], ""),
            "seats": [labels[k] for k in fmt.sides[index].seats],
            "wins": r.wins if r else None,
            "losses": r.losses if r else None,
        }
        for index, r in order
    ]


def entrant_names(tournament: Tournament) -> tuple[list[str], list[str]]:
    debaters: list[str] = []
    judges: list[str] = []
    panel = Entrant.objects.filter(tournament=tournament, role__in=[Entrant.Role.DEBATER, Entrant.Role.JUDGE])
    for role, name in panel.order_by("order").values_list("role", "name"):
        (debaters if role == Entrant.Role.DEBATER else judges).append(name)
    return debaters, judges


def report(tournament: Tournament, *, max_age: float = 0) -> Report:
    """The report over every verdict so far, cached until the next verdict lands.

    With `max_age` (live pushes while the tournament runs), a report computed less than that many
    seconds ago (or ten times as long as it took) is good enough: the fit takes a good fraction of a
    second at thousands of verdicts, and refitting on every verdict would hold up the debates sharing
    the runner.
    """
    latest = Debate.objects.filter(
        tournament_judgment__match__tournament=tournament, status=Debate.Status.COMPLETED
    ).aggregate(n=Count("id"), at=Max("finished_at"))
    key = f"tournament-report:{tournament.pk}:{latest['n']}:{latest['at'].timestamp() if latest['at'] else 0}"
    found = cache.get(key)
    if found is not None:
        return found
    # (when, report, seconds the fit took); wall-clock time, as the cache may be shared by several machines.
    live_key = f"tournament-live-report:{tournament.pk}"
    if max_age:
        recent = cache.get(live_key)
        # A slow fit is reused longer, so live refits never take more than a tenth of the runner's time.
        if recent is not None and time.time() - recent[0] < max(max_age, 10 * recent[2]):
            return recent[1]
    from tournaments.stats import build_report

    debaters, judges = entrant_names(tournament)
    started = time.time()
    found = build_report(verdicts(tournament), debaters, judges, formats=tournament.formats)
    cache.set(key, found, 600)
    cache.set(live_key, (time.time(), found, time.time() - started), 600)
    return found


def usage(tournament: Tournament) -> list[PersonaUsage]:
    """LLM calls, tokens and cost so far, per persona and model, over every debate of the tournament. One query."""
    return usage_of(debates_of(tournament))[0]


def debates_of(tournament: Tournament) -> QuerySet[Debate]:
    """A match's own debate (a classic or structured one is no judgment's) and every judgment's."""
    return Debate.objects.filter(
        Q(tournament_match__tournament=tournament) | Q(tournament_judgment__match__tournament=tournament)
    )


def matches(tournament: Tournament, only: Collection[int] | None = None) -> list[dict[str, Any]]:
    """Each match (or those with the ids in `only`) with its duel and every judgment's outcome, for the page,
    its pushes and the exports. Two queries."""
    chosen = Match.objects.filter(tournament=tournament)
    judged = Judgment.objects.filter(match__tournament=tournament)
    if only is not None:
        chosen, judged = chosen.filter(pk__in=only), judged.filter(match_id__in=only)
    judgments: dict[int, list[dict[str, Any]]] = {}
    for row in judged.order_by("judge__order", "repeat").values(
        "match_id",
        "judge__name",
        "repeat",
        "in_debate",
        "debate_id",
        "debate__status",
        "debate__winner",
        "debate__scores",
        "attempts",
    ):
        judgments.setdefault(row["match_id"], []).append(row)
    out = []
    names: dict[int, str] = {}
    refereed = {name: design.refereed(tournament.format_of(name)) for name in tournament.formats}
    for m in chosen.select_related("question", "debater_for", "debater_against", "debate").order_by("order"):
        name_for, name_against = m.debater_for.name, m.debater_against.name
        if m.sides and not names:
            names.update(Entrant.objects.filter(tournament=tournament).values_list("pk", "name"))
        # A debate its referees decided: its one verdict is their decision, each referee's vote beside it.
        panel, decided = [], None
        if refereed.get(m.format) and m.debate is not None and m.debate.status == Debate.Status.COMPLETED:
            panel = [
                {"judge": v.referee, "winner": v.stance or None, "answer": v.answer} for v in referee_votes(m.debate)
            ]
            found = decision(m.debate)
            decided = {**found, "rule_words": RULE_WORDS.get(found["rule"], found["rule"])} if found else None
        rows = []
        for j in judgments.get(m.pk, []):
            scores = j["debate__scores"] or {}
            completed = j["debate__status"] == Debate.Status.COMPLETED
            winner = _side(j["debate__winner"], name_for, name_against, j["debate_id"]) if completed else None
            rows.append(
                {
                    "judge": j["judge__name"],
                    "repeat": j["repeat"],
                    "debate": j["debate_id"],
                    "status": j["debate__status"] or "not started",
                    "winner": winner,
                    "winner_name": j["debate__winner"] if completed else "",
                    "score_for": scores.get(name_for) if completed else None,
                    "score_against": scores.get(name_against) if completed else None,
                    "contradicts": completed and contradicts(j["debate__winner"], scores),
                    "decision": decided if j["in_debate"] else None,  # rule (and in words), answer, split, reason...
                    "referees": panel if j["in_debate"] else [],
                }
            )
        out.append(
            {
                "match": m.order + 1,  # as people count: the first match is match 1
                "format": m.format,
                "question": m.question.index,
                "topic": m.question.topic,
                "premise": m.question.premise,
                "correct": m.question.correct or None,
                "debater_for": name_for,
                "debater_against": name_against,
                "debate": m.debate_id,
                "status": m.debate.status if m.debate else "not started",
                "attempts": m.attempts,
                "judgments": rows,
                "teams": teams(m, tournament.format_of(m.format), names) if m.sides else [],
            }
        )
    return out
