"""A tournament report's human figures, from the arena's blind votes: pure (no Django).

- **Ratings**: Bradley-Terry from the human votes, with bootstrap intervals (batches/stats.py's fit, each vote a
  verdict; a tie counts for no one; the bootstrap resamples whole matches, with all their votes).
- **The human majority of a match**: the option (FOR, AGAINST, a tie) with the most votes; equal counts make
  no majority.
- **Each LLM judge against the humans**, over the matches whose majority names a side and in which the judge
  named a winner (its first judgment): the share of matches where they agree, with a Wilson 95% interval, and
  Cohen's kappa with its asymptotic 95% interval (statsmodels' `cohens_kappa`).
- **What it rests on**: the votes counted, the people who cast them, the matches they cover, and the votes kept
  but not counted (cast on a transcript whose redaction was incomplete: tournaments/arena.py).

Every figure that cannot be computed is a `Figure(None, why)`.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from batches.stats import SIDES, Figure, Interval, Rating, Verdict, judges_own, plain, ratings, wilson

TIE = "tie"
CHOICES = (*SIDES, TIE)
HUMANS = "the audience"


@dataclass(frozen=True)
class Vote:
    match: int  # the match's debate id, as a Verdict's
    voter: str
    choice: str  # "for" | "against" | "tie"
    debater_for: str
    debater_against: str
    excluded: bool = False  # kept, not counted: the transcript still named someone


@dataclass(frozen=True)
class JudgeVsHumans:
    name: str
    matches: int  # matches with a human majority for a side and a winner from this judge
    agreed: int
    agreement: Interval
    kappa: Interval


@dataclass(frozen=True)
class MatchMajority:
    match: int
    votes: dict[str, int]  # for, against, tie
    majority: str | None  # "for" | "against" | "tie" | None (no majority)
    judges: dict[str, str | None]  # each judge's winner (first judgment)


@dataclass(frozen=True)
class HumanReport:
    votes: int  # counted
    voters: int
    matches: int
    excluded: int  # votes kept but not counted
    ratings: list[Rating]
    regularized: bool
    bootstrap: int
    judges: list[JudgeVsHumans]
    per_match: list[MatchMajority] = field(default_factory=list)
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return plain(self)


def majority(counts: Counter[str]) -> str | None:
    """The option with the most votes, or None when two share the most (or nobody voted)."""
    ranked = counts.most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def kappa(pairs: Sequence[tuple[str, str]], judge: str) -> Interval:
    """Cohen's kappa between the human majority and a judge over (human, judge) winners, with its asymptotic 95%
    interval (statsmodels)."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa

    if len(pairs) < 2:
        return Interval(
            Figure(None, f"fewer than two matches have a human majority and a winner from {judge}"), None, None
        )
    table = np.zeros((2, 2))
    for human, judged in pairs:
        table[SIDES.index(human), SIDES.index(judged)] += 1
    constant = [who for who, column in ((HUMANS, 0), (judge, 1)) if len({p[column] for p in pairs}) == 1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        result = cohens_kappa(table)
        value, low, high = float(result.kappa), float(result.kappa_low), float(result.kappa_upp)
    if not math.isfinite(value):
        who = " and ".join(constant) or "they"
        why = f"{who} picked one side every time, so there is no agreement beyond chance to measure"
        return Interval(Figure(None, why), None, None)
    if constant or caught or not (math.isfinite(low) and math.isfinite(high)) or low == high:
        why = (
            f"no interval: {' and '.join(constant) or 'a rater'} picked the same side every time, so kappa's standard "
            "error comes out as zero"
        )
        return Interval(Figure(value, why), None, None)
    return Interval(Figure(value), low, high)


def build(
    votes: Sequence[Vote],
    verdicts: Sequence[Verdict],
    debaters: Sequence[str],
    judges: Sequence[str],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> HumanReport:
    """The human figures from the arena's `votes` and the LLM judges' `verdicts` (only repeat 0 is compared)."""
    counted = [v for v in votes if not v.excluded]
    as_verdicts = [
        Verdict(
            match=v.match,
            question=0,
            judge=HUMANS,
            repeat=0,
            debater_for=v.debater_for,
            debater_against=v.debater_against,
            winner=v.choice if v.choice in SIDES else None,
            correct=None,
        )
        for v in counted
    ]
    fit = ratings(as_verdicts, debaters, bootstrap, seed)
    tallies: dict[int, Counter[str]] = defaultdict(Counter)
    for v in counted:
        tallies[v.match][v.choice] += 1
    first = {(v.match, v.judge): v.winner for v in judges_own(verdicts) if v.repeat == 0}
    per_match = [
        MatchMajority(
            match=m,
            votes={c: tallies[m][c] for c in CHOICES},
            majority=majority(tallies[m]),
            judges={j: first.get((m, j)) for j in judges},
        )
        for m in sorted(tallies)
    ]
    figures = []
    for judge in judges:
        pairs = [
            (row.majority, row.judges[judge])
            for row in per_match
            if row.majority in SIDES and row.judges[judge] is not None
        ]
        agreed = sum(h == j for h, j in pairs)
        figures.append(
            JudgeVsHumans(
                name=judge,
                matches=len(pairs),
                agreed=agreed,
                agreement=wilson(agreed, len(pairs), f"no match has both a human majority and a winner from {judge}"),
                kappa=kappa(pairs, judge),  # type: ignore[arg-type]
            )
        )
    notes = list(fit.notes) if counted else ["No vote is counted yet: the figures fill in as people vote in the arena."]
    return HumanReport(
        votes=len(counted),
        voters=len({v.voter for v in counted}),
        matches=len(tallies),
        excluded=len(votes) - len(counted),
        ratings=fit.ratings,
        regularized=fit.regularized,
        bootstrap=bootstrap,
        judges=figures,
        per_match=per_match,
        notes=tuple(notes),
    )
