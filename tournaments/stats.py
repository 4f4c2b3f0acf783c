"""A tournament's report from its verdicts: debater ratings, head-to-head wins, judge and panel figures.

Pure (no Django): `build_report(verdicts, debaters, judges)` takes plain `Verdict`s and returns a
`Report` of frozen dataclasses. Every figure that cannot be computed is a `Figure(None, why)`, with
`why` in words a reader understands; nothing here returns NaN or raises on thin data.

Ratings are Bradley-Terry strengths: P(i beats j) = 1 / (1 + exp(r_j - r_i)), so a difference of 1
means the stronger side wins about 73% of verdicts. They are centred on the mean of the rated debaters.
The fit is maximum likelihood by `scipy.optimize` (L-BFGS), all bootstrap replicates in one batched
problem, which keeps 1,000 replicates of 2,000 verdicts well under a second (one `choix` fit per
replicate takes about a millisecond each; the tests check this fit against choix's ILSR). When the
maximum likelihood does not exist (a debater never lost, or never won, or the debaters fall into
groups that never met), the fit adds a Gaussian prior N(0, 1/RIDGE) on each strength, and the
report's notes say so.

Counting rules: every verdict counts (each panel judge and each repeat), except that a verdict with
no winner counts for no one. Intervals resample whole matches (a transcript with all its verdicts).
"""

from __future__ import annotations

import dataclasses
import gc
import math
import threading
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

# numpy too (~0.1 s of every command's start) is imported by the functions that compute.
if TYPE_CHECKING:
    import numpy as np

# scipy and statsmodels (with pandas) are imported where a report is computed, not here: this module is
# loaded by every process Django starts (web, worker, each manage.py command), and importing them cost
# ~4 s of CPU per start on a two-core machine, for the few processes that ever build a report. A web process
# (after its first request, tournaments/apps.py) and a Celery worker (once ready, tournaments/tasks.py) import
# them in the background, so the first report they draw does not wait for them.


def load_libraries() -> None:
    """Import what a report needs (seconds of CPU, once a process)."""
    import scipy.optimize
    import scipy.special
    import scipy.stats  # noqa: F401
    import statsmodels.stats.inter_rater  # noqa: F401


def _load_and_freeze() -> None:
    load_libraries()
    # They live as long as the process, as what it loaded at start-up (frozen by chaoslm/asgi.py and a
    # worker once ready). Left to the collector, every full pass rescanned them: ~62k objects, 14-24 ms
    # more of each pause of the process's event loop (and of the tokens it streams) on an idle machine.
    gc.freeze()


def load_libraries_in_background() -> None:
    """`load_libraries` in a thread of its own, which the process does not wait for; then frozen."""
    threading.Thread(target=_load_and_freeze, name="load-report-libraries", daemon=True).start()


SIDES = ("for", "against")
RIDGE = 0.1  # the prior's precision when the maximum-likelihood fit diverges


@dataclass(frozen=True)
class Verdict:
    match: int  # the duel's Debate id (one transcript)
    question: int  # the question's index in the tournament
    judge: str  # judge persona name
    repeat: int  # 0-based: the k-th judgment of this transcript by this judge
    debater_for: str
    debater_against: str
    winner: str | None  # "for" | "against" | None (no winner)
    correct: str | None  # the question's known correct side ("for" | "against") or None
    score_for: float | None
    score_against: float | None
    contradicts: bool  # its JSON scores name the other side than its confirmed winner

    @property
    def winning_debater(self) -> str | None:
        if self.winner is None:
            return None
        return self.debater_for if self.winner == "for" else self.debater_against

    @property
    def losing_debater(self) -> str | None:
        if self.winner is None:
            return None
        return self.debater_against if self.winner == "for" else self.debater_for


@dataclass(frozen=True)
class Figure:
    value: float | None  # None means undefined
    why: str = ""  # when undefined: why, in words a user reads

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "why": self.why}


def _rate(hits: int, total: int, why: str) -> Figure:
    return Figure(hits / total) if total else Figure(None, why)


@dataclass(frozen=True)
class Rating:
    name: str
    rating: float | None  # None: the debater has no decided verdict (see `why`)
    ci_low: float | None
    ci_high: float | None
    wins: int
    losses: int
    wins_for: int
    losses_for: int
    win_rate_for: Figure
    wins_against: int
    losses_against: int
    win_rate_against: Figure
    why: str = ""  # why the rating or its interval is missing


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


def plain(value: Any) -> Any:
    """A report (any dataclass of figures) as plain JSON: every Figure as {"value": x or null, "why": "..."}."""
    if isinstance(value, Figure):
        return value.as_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


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
) -> Report:
    """The whole report. `debaters` and `judges` fix the order of rows; every verdict must name them."""
    debaters, judges = list(dict.fromkeys(debaters)), list(dict.fromkeys(judges))
    known_debaters, known_judges = set(debaters), set(judges)
    for v in verdicts:
        if v.debater_for not in known_debaters or v.debater_against not in known_debaters:
            raise ValueError(f"Verdict on match {v.match} names a debater not in the tournament.")
        if v.judge not in known_judges:
            raise ValueError(f"Verdict on match {v.match} is by {v.judge!r}, who is not on the panel.")
        if v.winner not in (None, *SIDES) or v.correct not in (None, *SIDES):
            raise ValueError(f"Verdict on match {v.match}: sides are 'for' or 'against'.")
    fit = _ratings(verdicts, debaters, bootstrap, seed)
    return Report(
        ratings=fit.ratings,
        head_to_head=_head_to_head(verdicts, debaters),
        judges=[_judge_figures(name, [v for v in verdicts if v.judge == name]) for name in judges],
        panel=_panel(verdicts, judges),
        verdicts=len(verdicts),
        matches=len({v.match for v in verdicts}),
        bootstrap=bootstrap,
        regularized=fit.regularized,
        notes=fit.notes,
    )


# -- ratings --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fit:
    ratings: list[Rating]
    regularized: bool
    notes: tuple[str, ...]


def _ratings(verdicts: Sequence[Verdict], debaters: list[str], bootstrap: int, seed: int) -> _Fit:
    import numpy as np

    counts = {name: Counter() for name in debaters}
    for v in verdicts:
        if v.winner is None:
            continue
        counts[v.debater_for]["wins_for" if v.winner == "for" else "losses_for"] += 1
        counts[v.debater_against]["wins_against" if v.winner == "against" else "losses_against"] += 1

    decided = [v for v in verdicts if v.winner is not None and v.debater_for != v.debater_against]
    involved = {v.debater_for for v in decided} | {v.debater_against for v in decided}
    rated = [name for name in debaters if name in involved]
    index = {name: i for i, name in enumerate(rated)}
    notes: list[str] = []
    point: dict[str, float] = {}
    low: dict[str, float] = {}
    high: dict[str, float] = {}
    regularized = False
    if rated:
        matches = sorted({v.match for v in decided})
        match_pos = {m: i for i, m in enumerate(matches)}
        winners = np.array([index[v.winning_debater] for v in decided])  # type: ignore[index]
        losers = np.array([index[v.losing_debater] for v in decided])  # type: ignore[index]
        of_match = np.array([match_pos[v.match] for v in decided])
        n = len(rated)
        # per_match[m, i * n + j]: how often i beat j in match m's verdicts.
        per_match = np.zeros((len(matches), n * n))
        np.add.at(per_match, (of_match, winners * n + losers), 1.0)
        full = per_match.sum(axis=0).reshape(1, n, n)
        regularized = not _mle_exists(full)[0]
        theta = _fit_bt(full, np.array([RIDGE if regularized else 0.0]))[0]
        point = {name: float(theta[index[name]]) for name in rated}
        if regularized:
            notes.append(_divergence_note(full[0], rated))
        if bootstrap > 0:
            rng = np.random.default_rng(seed)
            # Each replicate draws len(matches) matches with replacement, each with all its verdicts.
            m = len(matches)
            picks = rng.integers(0, m, size=(bootstrap, m)) + m * np.arange(bootstrap)[:, None]
            draws = np.bincount(picks.ravel(), minlength=bootstrap * m).reshape(bootstrap, m).astype(float)
            mats = (draws @ per_match).reshape(bootstrap, n, n)
            # Starting every replicate at the point estimate saves about half the iterations.
            replicates = _fit_bt(mats, np.where(_mle_exists(mats), 0.0, RIDGE), start=theta)
            lo, hi = np.percentile(replicates, [2.5, 97.5], axis=0)
            low = {name: float(lo[index[name]]) for name in rated}
            high = {name: float(hi[index[name]]) for name in rated}

    ratings = []
    for name in debaters:
        c = counts[name]
        why = ""
        if name not in point:
            why = (
                "no verdict has named a winner yet" if not rated else f"no verdict named a winner in a debate of {name}"
            )
        elif bootstrap <= 0:
            why = "no bootstrap replicates were asked for, so there is no interval"
        ratings.append(
            Rating(
                name=name,
                rating=point.get(name),
                ci_low=low.get(name),
                ci_high=high.get(name),
                wins=c["wins_for"] + c["wins_against"],
                losses=c["losses_for"] + c["losses_against"],
                wins_for=c["wins_for"],
                losses_for=c["losses_for"],
                win_rate_for=_rate(c["wins_for"], c["wins_for"] + c["losses_for"], "no decided verdict as FOR"),
                wins_against=c["wins_against"],
                losses_against=c["losses_against"],
                win_rate_against=_rate(
                    c["wins_against"], c["wins_against"] + c["losses_against"], "no decided verdict as AGAINST"
                ),
                why=why,
            )
        )
    ratings.sort(key=lambda r: (r.rating is None, -(r.rating or 0.0), r.name))
    if not rated:
        notes.append("No verdict named a winner yet, so there are no ratings.")
    return _Fit(ratings=ratings, regularized=regularized, notes=tuple(notes))


def _mle_exists(wins: np.ndarray) -> np.ndarray:
    """For each win matrix (B x n x n): whether Bradley-Terry's maximum likelihood is finite.

    It is iff "i beat j" links every debater to every other (the win graph is strongly connected),
    checked for all matrices at once by squaring their reachability matrices.
    """
    import numpy as np

    n = wins.shape[1]
    reach = ((wins > 0) | np.eye(n, dtype=bool)).astype(float)
    for _ in range(max(1, int(np.ceil(np.log2(n))))):
        reach = np.minimum(reach @ reach, 1.0)
    return reach.all(axis=(1, 2))


def _divergence_note(wins: np.ndarray, names: list[str]) -> str:
    unbeaten = [names[i] for i in range(len(names)) if wins[:, i].sum() == 0]
    winless = [names[i] for i in range(len(names)) if wins[i].sum() == 0]
    if unbeaten:
        cause = f"{', '.join(unbeaten)} never lost"
    elif winless:
        cause = f"{', '.join(winless)} never won"
    else:
        cause = "some debaters never met, directly or through common opponents, in both directions"
    return (
        f"{cause}, so the plain Bradley-Terry fit has no finite answer; the ratings are regularized "
        f"(a Gaussian prior of precision {RIDGE} on each strength), which keeps them finite but shrinks them "
        f"toward 0: read them as an order, not an exact size."
    )


def _fit_bt(wins: np.ndarray, ridge: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """Bradley-Terry strengths for each of B win matrices (B x n x n, wins[b, i, j]: i beat j), centred.

    One L-BFGS problem over all B replicates: their likelihoods are independent, so the joint optimum
    is each replicate's optimum, and numpy does the work of all of them at once.
    """
    import numpy as np
    from scipy import optimize, special

    b, n, _ = wins.shape
    games = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    ridge_col = ridge[:, None]

    def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
        theta = flat.reshape(b, n)
        diff = theta[:, :, None] - theta[:, None, :]
        # -log P(i beats j) = log(1 + exp(theta_j - theta_i)), stably.
        nll = (wins * np.logaddexp(0.0, -diff)).sum() + 0.5 * (ridge_col * theta**2).sum()
        grad = -won + (games * special.expit(diff)).sum(axis=2) + ridge_col * theta
        return float(nll), grad.ravel()

    result = optimize.minimize(
        objective,
        np.zeros(b * n) if start is None else np.tile(start, b),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 1000, "gtol": 1e-8, "ftol": 1e-13},
    )
    theta = result.x.reshape(b, n)
    return theta - theta.mean(axis=1, keepdims=True)


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
        for_win_rate=_rate(sum(v.winner == "for" for v in decided), len(decided), f"{name} has named no winner yet"),
        accuracy=_rate(
            sum(v.winner == v.correct for v in known),
            len(known),
            f"{name} judged no question with a known correct side",
        ),
        self_consistency=_self_consistency(name, verdicts),
        contradiction_rate=_rate(
            sum(v.contradicts for v in verdicts), len(verdicts), f"{name} has given no verdict yet"
        ),
    )


def _self_consistency(name: str, verdicts: list[Verdict]) -> Figure:
    """The share of pairs of this judge's judgments of the same transcript that name the same winner."""
    by_match: dict[int, list[str | None]] = defaultdict(list)
    for v in verdicts:
        by_match[v.match].append(v.winner)
    pairs = [pair for winners in by_match.values() for pair in combinations(winners, 2)]
    return _rate(sum(a == b for a, b in pairs), len(pairs), f"no repeats: {name} judged each transcript once")


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
        return Figure(None, f"every verdict picked {side}: with no variation, agreement beyond chance is undefined")
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
                f"{' and '.join(constant)} every time, so agreement is no better than chance; the interval is "
                f"undefined: with a judge who never varies, kappa's standard error comes out as zero, which says "
                f"nothing about how sure it is",
            )
        return _kappa(lambda: cohens_kappa(table, return_results=False))
    table, _ = aggregate_raters(data, n_cat=2)
    return _kappa(lambda: fleiss_kappa(table, method="fleiss"))


def _kappa(compute: Callable[[], Any]) -> Figure:
    """A kappa from statsmodels, or undefined: a division by zero inside it is a figure that does not exist,
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
            return Figure(None, f"{judge} gave every debater the same score, so a correlation is undefined")
    from scipy import stats

    pairs = [stats.pearsonr(scores[a], scores[b]).statistic for a, b in combinations(judges, 2)]
    return Figure(float(np.mean(pairs)))
