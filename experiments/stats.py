"""An experiment's report from its judged runs: judge accuracy per protocol with intervals, differences between
protocols, calibration, debaters' persuasiveness and ratings, quote verification, judges' position bias.

Pure (no Django): `build_report(runs, ...)` takes plain `Judged` runs and returns a `Report` of frozen
dataclasses. Every figure that cannot be computed is undefined (`value` None) with `why` in words.

Counting rules (docs/protocols/evidence.md has them for readers):
- A run counts for accuracy when its question's correct answer is known and its answer was parsed. A right
  choice scores 1, a wrong one 0, equal probabilities 0.5. Unparsed answers are counted apart, never guessed.
- Intervals are 95% percentile bootstrap intervals resampling questions (each with all its runs), numpy's
  generator with a fixed seed, so a report is the same each time it is drawn. A difference between two
  protocols resamples the questions both were judged on, the same draw for both (paired).
- Brier score: the mean of (1 - p)^2, p the probability the judge gave the correct answer (0 is perfect,
  0.25 is always saying 50%).
- Reliability: the probability the judge gave the answer shown first (A), in ten equal bins (the last one
  closed), against how often A was the correct answer.
- Position bias: a run and its twin differ only in the order the answers are shown; the flip rate is the
  share of twin pairs, both with a choice, whose choices differ as answers (a judge who always picks the
  first answer shown flips every time).
- Human accuracy (the arena's votes on evidence debates, experiments/arena.py): the share of counted votes that
  picked the correct answer, with a Wilson 95% interval; beside it each LLM judge's accuracy over its judgments
  of the same debates (the debate's own judge and a panel's replays; a 50-50 answer scores half), with the same
  interval. A vote cast on a transcript that may still name someone is kept apart, counted only as excluded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

# numpy too (~0.1 s of every command's start) is imported by the functions that compute.
if TYPE_CHECKING:
    import numpy as np

from batches.stats import Figure, Interval, Rating, Verdict, plain, ratings, wilson
from experiments.design import BLIND, CONSULTANCY, DEBATE, consulted, debated

BINS = 10
BOOTSTRAP = 2000


@dataclass(frozen=True)
class Judged:
    """A run whose debate completed, as the report reads it; answers are the question's (0, 1), not letters."""

    run: int
    question: int
    protocol: str
    judge: str
    swapped: bool
    correct: int | None  # the question's correct answer, None when unknown
    probabilities: tuple[float, float] | None  # the judge's, for answers 0 and 1; None: unparsed
    first: str | None = None  # the debater arguing answer 0 (a debate), or the consultant
    second: str | None = None  # the debater arguing answer 1 (a debate)
    assigned: int | None = None  # the consultant's answer
    # Per speaker name: quotes made, verified, unverified (none on a panel's replay: its debate's run has them).
    quotes: dict[str, dict[str, int]] = field(default_factory=dict)
    source: int | None = None  # the run whose debate this judge read again (a panel's other judge), if any
    asked: tuple[int, int] | None = None  # a consultancy's: (questions the judge asked, times it could ask)

    @property
    def choice(self) -> int | None:
        if self.probabilities is None or self.probabilities[0] == self.probabilities[1]:
            return None
        return 0 if self.probabilities[0] > self.probabilities[1] else 1

    @property
    def score(self) -> float | None:
        """1 right, 0 wrong, 0.5 no preference; None when it cannot count (unparsed, or no correct answer)."""
        if self.correct is None or self.probabilities is None:
            return None
        return 0.5 if self.choice is None else float(self.choice == self.correct)

    @property
    def twin_key(self) -> tuple[Any, ...]:
        return (self.question, self.protocol, self.judge, self.first, self.second, self.assigned)


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95% bootstrap interval; `value` None is undefined (see `why`)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    runs: int = 0
    questions: int = 0
    why: str = ""


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    count: int
    forecast: float | None  # the mean probability given to A in the bin
    observed: float | None  # how often A was correct in the bin


@dataclass(frozen=True)
class ProtocolFigures:
    protocol: str
    runs: int
    unparsed: int
    accuracy: Estimate
    brier: Figure
    reliability: list[Bin]


@dataclass(frozen=True)
class DebaterFigures:
    name: str
    win_rate_correct: Figure  # in debates, when arguing the correct answer
    win_rate_incorrect: Figure
    consultant_win_rate_correct: Figure  # as a consultant: the judge chose its answer
    consultant_win_rate_incorrect: Figure
    rating: float | None
    rating_low: float | None
    rating_high: float | None
    rating_why: str
    quotes: int
    verified: int
    unverified: int
    verified_rate: Figure


@dataclass(frozen=True)
class JudgeFigures:
    name: str
    runs: int
    unparsed: int
    flip_rate: Figure
    twin_pairs: int
    accuracy: dict[str, Figure]  # by protocol
    asked: Figure  # in consultancies: the share of its chances to question the consultant that it took


@dataclass(frozen=True)
class Report:
    protocols: list[ProtocolFigures]
    differences: dict[str, Estimate]  # "evidence_debate - consultancy", "evidence_debate - blind"
    debaters: list[DebaterFigures]
    judges: list[JudgeFigures]
    runs: int
    bootstrap: int
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON: every undefined figure as null with its reason."""
        return plain(self)


# -- accuracy and its intervals --------------------------------------------------------------------
def _per_question(runs: Sequence[Judged]) -> dict[int, tuple[float, int]]:
    """Question -> (sum of scores, runs counted)."""
    totals: dict[int, list[float]] = defaultdict(lambda: [0.0, 0])
    for run in runs:
        if run.score is not None:
            totals[run.question][0] += run.score
            totals[run.question][1] += 1
    return {q: (s, int(n)) for q, (s, n) in totals.items()}


def _resample(count: int, bootstrap: int, seed: int) -> np.ndarray:
    """(bootstrap x count): how often each of `count` questions is drawn in each replicate."""
    import numpy as np

    rng = np.random.default_rng(seed)
    picks = rng.integers(0, count, size=(bootstrap, count))
    return np.stack([np.bincount(row, minlength=count) for row in picks]).astype(float)


def _interval(replicates: np.ndarray) -> tuple[float, float]:
    import numpy as np

    low, high = np.percentile(replicates, [2.5, 97.5])
    return float(low), float(high)


def accuracy(runs: Sequence[Judged], *, bootstrap: int = BOOTSTRAP, seed: int = 0) -> Estimate:
    """The share of right choices, with its interval over resampled questions."""
    import numpy as np

    per = _per_question(runs)
    if not per:
        return Estimate(None, why=_why_no_score(runs))
    questions = sorted(per)
    sums = np.array([per[q][0] for q in questions])
    counts = np.array([per[q][1] for q in questions], dtype=float)
    value = float(sums.sum() / counts.sum())
    low = high = None
    why = ""
    if bootstrap > 0:
        draws = _resample(len(questions), bootstrap, seed)
        low, high = _interval((draws @ sums) / (draws @ counts))
    else:
        why = "no bootstrap replicates were asked for, so there is no interval"
    return Estimate(value, low, high, int(counts.sum()), len(questions), why)


def difference(
    runs_a: Sequence[Judged], runs_b: Sequence[Judged], *, bootstrap: int = BOOTSTRAP, seed: int = 0
) -> Estimate:
    """Accuracy under A minus accuracy under B, over the questions both were judged on, resampled together."""
    import numpy as np

    per_a, per_b = _per_question(runs_a), _per_question(runs_b)
    questions = sorted(set(per_a) & set(per_b))
    if not questions:
        if not per_a or not per_b:
            why = _why_no_score(runs_a if not per_a else runs_b)
        else:
            why = "no question was judged under both protocols"
        return Estimate(None, why=why)
    sums_a = np.array([per_a[q][0] for q in questions])
    counts_a = np.array([per_a[q][1] for q in questions], dtype=float)
    sums_b = np.array([per_b[q][0] for q in questions])
    counts_b = np.array([per_b[q][1] for q in questions], dtype=float)
    value = float(sums_a.sum() / counts_a.sum() - sums_b.sum() / counts_b.sum())
    low = high = None
    why = ""
    if bootstrap > 0:
        draws = _resample(len(questions), bootstrap, seed)
        low, high = _interval((draws @ sums_a) / (draws @ counts_a) - (draws @ sums_b) / (draws @ counts_b))
    else:
        why = "no bootstrap replicates were asked for, so there is no interval"
    return Estimate(value, low, high, int(counts_a.sum() + counts_b.sum()), len(questions), why)


def _why_no_score(runs: Sequence[Judged]) -> str:
    if not runs:
        return "no run has been judged yet"
    if all(r.correct is None for r in runs):
        return "no question judged has a known correct answer"
    return "every answer with a known correct answer was unparsed"


# -- calibration ------------------------------------------------------------------------------------
def brier(runs: Sequence[Judged]) -> Figure:
    scored = [r for r in runs if r.correct is not None and r.probabilities is not None]
    if not scored:
        return Figure(None, _why_no_score(runs))
    return Figure(sum((1 - r.probabilities[r.correct]) ** 2 for r in scored) / len(scored))  # type: ignore[index]


def reliability(runs: Sequence[Judged], bins: int = BINS) -> list[Bin]:
    """The probability given to the answer shown first (A), binned, against how often A was correct."""
    found: list[list[tuple[float, float]]] = [[] for _ in range(bins)]
    for run in runs:
        if run.correct is None or run.probabilities is None:
            continue
        shown_first = 1 if run.swapped else 0
        p = run.probabilities[shown_first]
        found[min(int(p * bins), bins - 1)].append((p, float(run.correct == shown_first)))
    out = []
    for index, pairs in enumerate(found):
        out.append(
            Bin(
                low=index / bins,
                high=(index + 1) / bins,
                count=len(pairs),
                forecast=sum(p for p, _ in pairs) / len(pairs) if pairs else None,
                observed=sum(o for _, o in pairs) / len(pairs) if pairs else None,
            )
        )
    return out


# -- judges -------------------------------------------------------------------------------------------
def flips(runs: Sequence[Judged]) -> tuple[Figure, int]:
    """The flip rate over twin pairs that both made a choice, and how many such pairs there were."""
    twins: dict[tuple[Any, ...], dict[bool, Judged]] = defaultdict(dict)
    for run in runs:
        twins[run.twin_key][run.swapped] = run
    pairs = [
        (pair[False], pair[True])
        for pair in twins.values()
        if len(pair) == 2 and pair[False].choice is not None and pair[True].choice is not None
    ]
    if not pairs:
        why = (
            "no run has both answer orders judged yet"
            if not any(len(p) == 2 for p in twins.values())
            else "no pair of runs in both orders has a choice in both (unparsed or 50-50 answers)"
        )
        return Figure(None, why), 0
    flipped = sum(1 for plain, swapped in pairs if plain.choice != swapped.choice)
    return Figure(flipped / len(pairs)), len(pairs)


def _rate(hits: int, total: int, why: str) -> Figure:
    return Figure(hits / total) if total else Figure(None, why)


def _judge(name: str, runs: Sequence[Judged], protocols: Sequence[str]) -> JudgeFigures:
    mine = [r for r in runs if r.judge == name]
    flip, pairs = flips(mine)
    by_protocol = {}
    for protocol in protocols:
        scored = [r.score for r in mine if r.protocol == protocol and r.score is not None]
        by_protocol[protocol] = (
            Figure(sum(scored) / len(scored))
            if scored
            else Figure(None, _why_no_score([r for r in mine if r.protocol == protocol]))
        )
    chances = [r.asked for r in mine if r.asked is not None]
    return JudgeFigures(
        name=name,
        runs=len(mine),
        unparsed=sum(1 for r in mine if r.probabilities is None),
        flip_rate=flip,
        twin_pairs=pairs,
        accuracy=by_protocol,
        asked=_rate(
            sum(a for a, _ in chances), sum(c for _, c in chances), "no consultancy of more than one round judged"
        ),
    )


# -- debaters -----------------------------------------------------------------------------------------
def _sides(run: Judged) -> list[tuple[str, int]]:
    """(speaker, the answer it argued) for each speaker of the run."""
    if debated(run.protocol) and run.first is not None and run.second is not None:
        return [(run.first, 0), (run.second, 1)]
    if consulted(run.protocol) and run.first is not None and run.assigned is not None:
        return [(run.first, run.assigned)]
    return []


def _wins(name: str, runs: Sequence[Judged], protocol: str, correct: bool) -> Figure:
    hits = total = 0
    for run in runs:
        if run.protocol != protocol or run.correct is None or run.choice is None:
            continue
        for speaker, answer in _sides(run):
            if speaker == name and (answer == run.correct) == correct:
                total += 1
                hits += run.choice == answer
    side = "correct" if correct else "incorrect"
    kind = "debate" if debated(protocol) else "consultancy"
    # The row names the debater: the reason need not.
    return _rate(hits, total, f"no {kind} arguing the {side} answer with a decided verdict")


def _verdicts(runs: Sequence[Judged]) -> list[Verdict]:
    """The debates as the tournaments' verdicts, for their Bradley-Terry ratings: the side shown first is FOR."""
    out = []
    for run in runs:
        if not debated(run.protocol) or run.first is None or run.second is None:
            continue
        shown_a, shown_b = (run.second, run.first) if run.swapped else (run.first, run.second)
        winner = None
        if run.choice is not None:
            winner = "for" if run.choice == (1 if run.swapped else 0) else "against"
        correct = None
        if run.correct is not None:
            correct = "for" if run.correct == (1 if run.swapped else 0) else "against"
        out.append(
            Verdict(
                match=run.run,
                question=run.question,
                judge=run.judge,
                repeat=0,
                debater_for=shown_a,
                debater_against=shown_b,
                winner=winner,
                correct=correct,
            )
        )
    return out


def _debaters(
    runs: Sequence[Judged], debaters: Sequence[str], bootstrap: int, seed: int
) -> tuple[list[DebaterFigures], tuple[str, ...]]:
    verdicts = _verdicts(runs)
    rated: dict[str, Rating] = {}
    notes: tuple[str, ...] = ()
    if verdicts and debaters:
        fitted = ratings(verdicts, debaters, bootstrap, seed)
        rated = {r.name: r for r in fitted.ratings}
        notes = fitted.notes
    out = []
    for name in debaters:
        counts = {"quotes": 0, "verified": 0, "unverified": 0}
        for run in runs:
            for key, value in run.quotes.get(name, {}).items():
                counts[key] += value
        rating = rated.get(name)
        out.append(
            DebaterFigures(
                name=name,
                win_rate_correct=_wins(name, runs, DEBATE, True),
                win_rate_incorrect=_wins(name, runs, DEBATE, False),
                consultant_win_rate_correct=_wins(name, runs, CONSULTANCY, True),
                consultant_win_rate_incorrect=_wins(name, runs, CONSULTANCY, False),
                rating=rating.rating if rating else None,
                rating_low=rating.ci_low if rating else None,
                rating_high=rating.ci_high if rating else None,
                rating_why=rating.why if rating else "no judged debate against another debater",
                quotes=counts["quotes"],
                verified=counts["verified"],
                unverified=counts["unverified"],
                verified_rate=_rate(counts["verified"], counts["quotes"], "no quote made"),
            )
        )
    return out, notes


# -- the report ---------------------------------------------------------------------------------------
DIFFERENCES = ((DEBATE, CONSULTANCY), (DEBATE, BLIND))


def build_report(
    runs: Sequence[Judged],
    protocols: Sequence[str],
    debaters: Sequence[str],
    judges: Sequence[str],
    *,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
) -> Report:
    """The whole report; `protocols`, `debaters` and `judges` fix the order of rows."""
    of: dict[str, list[Judged]] = {protocol: [] for protocol in protocols}
    for run in runs:
        of.setdefault(run.protocol, []).append(run)
    figures = [
        ProtocolFigures(
            protocol=protocol,
            runs=len(of[protocol]),
            unparsed=sum(1 for r in of[protocol] if r.probabilities is None),
            accuracy=accuracy(of[protocol], bootstrap=bootstrap, seed=seed),
            brier=brier(of[protocol]),
            reliability=reliability(of[protocol]),
        )
        for protocol in protocols
    ]
    differences = {}
    for a, b in DIFFERENCES:
        if a in protocols and b in protocols:
            differences[f"{a} - {b}"] = difference(of[a], of[b], bootstrap=bootstrap, seed=seed)
    debater_rows, notes = _debaters(runs, debaters, bootstrap, seed)
    return Report(
        protocols=figures,
        differences=differences,
        debaters=debater_rows,
        judges=[_judge(name, runs, protocols) for name in judges],
        runs=len(runs),
        bootstrap=bootstrap,
        notes=notes,
    )


# -- the audience (the arena's votes) -----------------------------------------------------------------
HUMANS = "the audience"


@dataclass(frozen=True)
class HumanVote:
    run: int  # the run whose debate the voter read
    voter: str
    right: bool  # they picked the correct answer
    excluded: bool = False  # kept, not counted: the transcript may still have named someone


@dataclass(frozen=True)
class JudgeOnVoted:
    name: str
    runs: int  # its parsed judgments of the debates people voted on
    debates: int
    accuracy: Interval


@dataclass(frozen=True)
class HumanAccuracy:
    votes: int  # counted
    voters: int
    debates: int
    excluded: int  # kept but not counted
    accuracy: Interval
    judges: list[JudgeOnVoted]

    def as_dict(self) -> dict[str, Any]:
        return plain(self)


def human_accuracy(votes: Sequence[HumanVote], runs: Sequence[Judged], judges: Sequence[str]) -> HumanAccuracy:
    """The audience's accuracy from its counted `votes`, and each of `judges`' over the same debates (`runs`: the
    judged runs; a replay counts for the debate it read, its `source`)."""
    counted = [v for v in votes if not v.excluded]
    voted = {v.run for v in counted}
    rows = []
    for name in judges:
        scored = [
            r
            for r in runs
            if r.judge == name and debated(r.protocol) and (r.source or r.run) in voted and r.score is not None
        ]
        rows.append(
            JudgeOnVoted(
                name=name,
                runs=len(scored),
                debates=len({r.source or r.run for r in scored}),
                accuracy=wilson(
                    sum(r.score for r in scored),  # type: ignore[misc]
                    len(scored),
                    f"{name} has no parsed answer on a debate people voted on",
                ),
            )
        )
    return HumanAccuracy(
        votes=len(counted),
        voters=len({v.voter for v in counted}),
        debates=len(voted),
        excluded=len(votes) - len(counted),
        accuracy=wilson(sum(v.right for v in counted), len(counted), "no vote is counted yet"),
        judges=rows,
    )
