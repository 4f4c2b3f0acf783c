"""What every kind of batch's report is made of, and the ratings both kinds give debaters.

Pure (no Django): every figure that cannot be computed is a `Figure(None, why)`, with `why` in words a reader
understands; nothing here returns NaN or raises on thin data.

Ratings are Bradley-Terry strengths: P(i beats j) = 1 / (1 + exp(r_j - r_i)), so a difference of 1
means the stronger side wins about 73% of verdicts. They are centred on the mean of the rated debaters.
The fit is maximum likelihood by `scipy.optimize` (L-BFGS), all bootstrap replicates in one batched
problem, which keeps 1,000 replicates of 2,000 verdicts well under a second (one `choix` fit per
replicate takes about a millisecond each; the tests check this fit against choix's ILSR). When the
maximum likelihood does not exist (a debater never lost, or never won, or the debaters fall into
groups that never met), the fit adds a Gaussian prior N(0, 1/RIDGE) on each strength, and the
report's notes say so. A verdict with no winner counts for no one. Intervals resample whole matches (a
transcript with all its verdicts).
"""

from __future__ import annotations

import dataclasses
import gc
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debates.formats import DEFAULT_FORMAT

# numpy (~0.1 s of every command's start) is imported by the functions that compute.
if TYPE_CHECKING:
    import numpy as np

# scipy and statsmodels (with pandas) are imported where a report is computed, not here: this module is
# loaded by every process Django starts (web, worker, each manage.py command), and importing them cost
# ~4 s of CPU per start on a two-core machine, for the few processes that ever build a report. A web process
# (after its first request, batches/apps.py) and a Celery worker (once ready, batches/tasks.py) import
# them in the background, so the first report they draw does not wait for them.


def load_libraries() -> None:
    """Import what a report needs (seconds of CPU, once a process)."""
    import scipy.optimize
    import scipy.special
    import scipy.stats  # noqa: F401
    import statsmodels.stats.inter_rater  # noqa: F401


def _load_and_freeze() -> None:
    load_libraries()
    # They live as long as the process, as what it loaded at start-up (frozen by config/asgi.py and a
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
    # A verdict that only names a side (a person's vote, an experiment's judge) has no scores.
    score_for: float | None = None
    score_against: float | None = None
    contradicts: bool = False  # its JSON scores name the other side than its confirmed winner
    format: str = DEFAULT_FORMAT  # the judged debate's format
    # A panel's decision (its referees inside the debate, each naming a side, a rule over them): one verdict, which
    # the ratings count once, and each referee's own vote, which that judge's figures and the panel's agreement read.
    ballots: tuple[Verdict, ...] = ()

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


def judges_own(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """Each judge's own verdicts: a panel's decision stands for its referees' ballots, any other verdict for
    itself."""
    return [ballot for v in verdicts for ballot in (v.ballots or (v,))]


@dataclass(frozen=True)
class Figure:
    value: float | None  # None means undefined
    why: str = ""  # when undefined: why, in words a user reads

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "why": self.why}


def rate(hits: int, total: int, why: str) -> Figure:
    return Figure(hits / total) if total else Figure(None, why)


@dataclass(frozen=True)
class Interval:
    value: Figure
    low: float | None
    high: float | None


def wilson(hits: float, total: int, why: str) -> Interval:
    """A share with its Wilson score 95% interval (`why`: the reason it is undefined when `total` is 0). `hits`
    may hold halves: an experiment's judge who gives both answers 50% scores half a hit."""
    if not total:
        return Interval(Figure(None, why), None, None)
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(hits, total, alpha=0.05, method="wilson")
    return Interval(Figure(hits / total), float(low), float(high))


NEEDS_MORE = "needs more verdicts: every resample of the matches so far gives the same rating, so there is no interval"


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


# -- ratings --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    ratings: list[Rating]
    regularized: bool
    notes: tuple[str, ...]


def ratings(verdicts: Sequence[Verdict], debaters: Sequence[str], bootstrap: int = 1000, seed: int = 0) -> Fit:
    """Every debater's Bradley-Terry rating with its bootstrap interval, and its wins and losses by side, in the
    order of `debaters` (each verdict names two of them); the notes say when the fit had to be regularized."""
    import numpy as np

    debaters = list(dict.fromkeys(debaters))
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
            # Resampling the verdicts of one match (or of matches that all say the same of someone) draws the same
            # rating every time: a zero-width interval would claim a certainty those few verdicts lack.
            spread = {name for name in rated if hi[index[name]] - lo[index[name]] > 1e-9}
            low = {name: float(lo[index[name]]) for name in spread}
            high = {name: float(hi[index[name]]) for name in spread}

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
        elif name not in low:
            why = NEEDS_MORE
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
                win_rate_for=rate(c["wins_for"], c["wins_for"] + c["losses_for"], "no decided verdict as FOR"),
                wins_against=c["wins_against"],
                losses_against=c["losses_against"],
                win_rate_against=rate(
                    c["wins_against"], c["wins_against"] + c["losses_against"], "no decided verdict as AGAINST"
                ),
                why=why,
            )
        )
    ratings.sort(key=lambda r: (r.rating is None, -(r.rating or 0.0), r.name))
    if not rated:
        notes.append("No verdict named a winner yet, so there are no ratings.")
    return Fit(ratings=ratings, regularized=regularized, notes=tuple(notes))


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
