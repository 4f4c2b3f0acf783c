"""A tournament's report from its verdicts: debater ratings, head-to-head wins, judge and panel figures.

Pure (no Django): `build_report(verdicts, debaters, judges)` takes plain `Verdict`s and returns a
`Report` of frozen dataclasses. Every figure that cannot be computed is a `Figure(None, why)`, with
`why` in words a reader understands; nothing here returns NaN or raises on thin data.

The ratings are batches/stats.py's (Bradley-Terry, shared with experiments).

Counting rules: every verdict counts (each panel judge and each repeat), except that a verdict with
no winner counts for no one; a debate decided by referees inside it is one verdict (its decision), while each
referee's own vote counts in that judge's figures and the panel's agreement. Intervals resample whole matches
(a transcript with all its verdicts).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

# numpy too (~0.1 s of every command's start) is imported by the functions that compute.
if TYPE_CHECKING:
    pass

from batches.stats import SIDES, Figure, Rating, Verdict, judges_own, plain, rate, ratings


@dataclass(frozen=True)
class JudgeFigures:
    name: str
    verdicts: int
    for_win_rate: Figure
    accuracy: Figure
    self_consistency: Figure
    contradiction_rate: Figure


@dataclass(frozen=True)
class PanelFigures:
    agreement: Figure
    method: str  # "cohen" | "fleiss" | ""
    score_correlation: Figure


@dataclass(frozen=True)
class FormatFigures:
    """How the debates of one format were judged, to compare the formats of a tournament that mixes them."""

    name: str
    matches: int
    verdicts: int
    for_win_rate: Figure
    accuracy: Figure
    contradiction_rate: Figure
    agreement: Figure
    method: str


@dataclass(frozen=True)
class Report:
    ratings: list[Rating]
    head_to_head: dict[str, dict[str, int]]
    judges: list[JudgeFigures]
    panel: PanelFigures
    verdicts: int = 0
    matches: int = 0
    bootstrap: int = 0
    regularized: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
    formats: list[FormatFigures] = field(default_factory=list)  # a row a format, when there are several

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON: every Figure as {"value": x or null, "why": "..."}."""
        return plain(self)


def build_report(
    verdicts: Sequence[Verdict],
    debaters: Sequence[str],
    judges: Sequence[str],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    formats: Sequence[str] = (),
) -> Report:
    """The whole report. `debaters` and `judges` fix the order of rows; every verdict must name them. With more than
    one of `formats`, a row a format compares them."""
    debaters, judges = list(dict.fromkeys(debaters)), list(dict.fromkeys(judges))
    known_debaters, known_judges = set(debaters), set(judges)
    own = judges_own(verdicts)
    for v in [*verdicts, *own]:
        if v.debater_for not in known_debaters or v.debater_against not in known_debaters:
            raise ValueError(f"Verdict on match {v.match} names a debater not in the tournament.")
        if v.judge not in known_judges:
            raise ValueError(f"Verdict on match {v.match} is by {v.judge!r}, who is not on the panel.")
        if v.winner not in (None, *SIDES) or v.correct not in (None, *SIDES):
            raise ValueError(f"Verdict on match {v.match}: sides are 'for' or 'against'.")
    fit = ratings(verdicts, debaters, bootstrap, seed)
    return Report(
        ratings=fit.ratings,
        head_to_head=_head_to_head(verdicts, debaters),
        judges=[_judge_figures(name, [v for v in own if v.judge == name]) for name in judges],
        panel=_panel(own, judges),
        verdicts=len(verdicts),
        matches=len({v.match for v in verdicts}),
        bootstrap=bootstrap,
        regularized=fit.regularized,
        notes=fit.notes,
        formats=[_format_figures(f, [v for v in verdicts if v.format == f], judges) for f in formats]
        if len(formats) > 1
        else [],
    )


def _head_to_head(verdicts: Sequence[Verdict], debaters: list[str]) -> dict[str, dict[str, int]]:
    table = {row: dict.fromkeys(debaters, 0) for row in debaters}
    for v in verdicts:
        if v.winner is not None:
            table[v.winning_debater][v.losing_debater] += 1  # type: ignore[index]
    return table


# -- judges ---------------------------------------------------------------------------------------


def _judge_figures(name: str, verdicts: list[Verdict]) -> JudgeFigures:
    decided = [v for v in verdicts if v.winner is not None]
    known = [v for v in verdicts if v.correct is not None]
    return JudgeFigures(
        name=name,
        verdicts=len(verdicts),
        for_win_rate=rate(sum(v.winner == "for" for v in decided), len(decided), f"{name} has named no winner yet"),
        accuracy=rate(
            sum(v.winner == v.correct for v in known),
            len(known),
            f"{name} judged no question with a known correct side",
        ),
        self_consistency=_self_consistency(name, verdicts),
        contradiction_rate=rate(
            sum(v.contradicts for v in verdicts), len(verdicts), f"{name} has given no verdict yet"
        ),
    )


def _format_figures(name: str, verdicts: list[Verdict], judges: list[str]) -> FormatFigures:
    """The format's verdicts as a judge's are read (FOR wins, accuracy, contradictions), and its panel's agreement."""
    figures = _judge_figures(f"the {name} debates", verdicts)
    panel = _panel(judges_own(verdicts), judges)
    return FormatFigures(
        name=name,
        matches=len({v.match for v in verdicts}),
        verdicts=len(verdicts),
        for_win_rate=figures.for_win_rate,
        accuracy=figures.accuracy,
        contradiction_rate=figures.contradiction_rate,
        agreement=panel.agreement,
        method=panel.method,
    )


def _self_consistency(name: str, verdicts: list[Verdict]) -> Figure:
    """The share of pairs of this judge's judgments of the same transcript that name the same winner."""
    by_match: dict[int, list[str | None]] = defaultdict(list)
    for v in verdicts:
        by_match[v.match].append(v.winner)
    pairs = [pair for winners in by_match.values() for pair in combinations(winners, 2)]
    return rate(sum(a == b for a, b in pairs), len(pairs), f"no repeats: {name} judged each transcript once")


def _panel(verdicts: Sequence[Verdict], judges: list[str]) -> PanelFigures:
    if len(judges) < 2:
        one = Figure(None, "one judge: panel figures compare two or more")
        return PanelFigures(agreement=one, method="", score_correlation=one)
    method = "cohen" if len(judges) == 2 else "fleiss"
    first = {(v.match, v.judge): v for v in verdicts if v.repeat == 0}
    matches = sorted({v.match for v in verdicts})
    return PanelFigures(
        agreement=_agreement(first, matches, judges),
        method=method,
        score_correlation=_score_correlation(first, matches, judges),
    )


def _agreement(first: dict[tuple[int, str], Verdict], matches: list[int], judges: list[str]) -> Figure:
    """Kappa on the winners of the matches every judge decided (each judge's first judgment)."""
    import numpy as np
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

    rows = []
    for match in matches:
        winners = [first[(match, j)].winner if (match, j) in first else None for j in judges]
        if all(w is not None for w in winners):
            rows.append([SIDES.index(w) for w in winners])  # type: ignore[arg-type]
    if len(rows) < 2:
        return Figure(None, "fewer than two matches have a winner from every judge")
    data = np.array(rows)
    if (data == data[0, 0]).all():
        side = SIDES[data[0, 0]].upper()
        return Figure(None, f"every verdict picked {side}, and agreement beyond chance needs winners that vary")
    if len(judges) == 2:
        table = np.zeros((2, 2))
        np.add.at(table, (data[:, 0], data[:, 1]), 1)
        constant = [
            f"{judge} picked {SIDES[data[0, column]].upper()}"
            for column, judge in enumerate(judges)
            if (data[:, column] == data[0, column]).all()
        ]
        if constant:
            # A judge who never varies agrees with the other exactly as often as chance predicts: kappa is 0, a
            # real answer. Only its interval fails: the asymptotic variance is 0, a certainty the data lack.
            value = _kappa(lambda: cohens_kappa(table, return_results=False))
            return Figure(
                value.value,
                f"no interval: {' and '.join(constant)} every time, so agreement is no better than chance, and "
                f"with a judge who never varies kappa's standard error comes out as zero, which says nothing about "
                f"how sure it is",
            )
        return _kappa(lambda: cohens_kappa(table, return_results=False))
    table, _ = aggregate_raters(data, n_cat=2)
    return _kappa(lambda: fleiss_kappa(table, method="fleiss"))


def _kappa(compute: Callable[[], Any]) -> Figure:
    """A kappa from statsmodels, or none: a division by zero inside it is a figure that does not exist,
    said in the report, not a RuntimeWarning printed on the terminal of `tournament report`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        value = float(compute())
    if caught or not math.isfinite(value):
        return Figure(None, "the judges' winners vary too little for agreement beyond chance (a division by zero)")
    return Figure(value)


def _score_correlation(first: dict[tuple[int, str], Verdict], matches: list[int], judges: list[str]) -> Figure:
    """Pearson's r between judges' scores of each debater in each match (the mean over pairs of judges)."""
    import numpy as np

    scores: dict[str, list[float]] = {j: [] for j in judges}
    for match in matches:
        given = [first.get((match, j)) for j in judges]
        if all(v is not None and v.score_for is not None and v.score_against is not None for v in given):
            for judge, v in zip(judges, given, strict=True):
                scores[judge] += [float(v.score_for), float(v.score_against)]  # type: ignore[union-attr,arg-type]
    if len(scores[judges[0]]) < 4:
        return Figure(None, "fewer than two matches have scores from every judge")
    for judge, values in scores.items():
        if len(set(values)) == 1:
            return Figure(None, f"{judge} gave every debater the same score, so there is no correlation to compute")
    from scipy import stats

    pairs = [stats.pearsonr(scores[a], scores[b]).statistic for a, b in combinations(judges, 2)]
    return Figure(float(np.mean(pairs)))
