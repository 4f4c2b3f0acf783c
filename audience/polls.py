"""The Oxford poll's arithmetic: shares, swings, the audience's winner and the paired table. Pure: no database.

The audience votes once before the debate and once after it; each vote names a side (or answer) or
"undecided". By the Intelligence Squared rule the side whose share of the room grew more (in
percentage points, after minus before) wins; a tie in gains, or a poll with an empty phase, names no
winner. Tallies alone hide who changed their mind: the paired table counts, among the people who
voted both times, each (before, after) pair.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

UNDECIDED = "undecided"


def shares(counts: Mapping[str, int], options: Sequence[str]) -> dict[str, float]:
    """Each option's share of the votes, in percent (all 0 when nobody voted)."""
    total = sum(counts.get(option, 0) for option in options)
    return {option: (100.0 * counts.get(option, 0) / total if total else 0.0) for option in options}


def tally(votes: Mapping[str, str], options: Sequence[str]) -> dict[str, int]:
    """How many votes each option got; `votes`: voter -> option (votes for unknown options are not counted)."""
    counted = Counter(choice for choice in votes.values() if choice in options)
    return {option: counted.get(option, 0) for option in options}


@dataclass(frozen=True)
class Result:
    options: tuple[str, ...]  # the sides, then UNDECIDED
    before: dict[str, int]
    after: dict[str, int]
    before_share: dict[str, float]
    after_share: dict[str, float]
    swing: dict[str, float]  # points, after minus before, for each side (not UNDECIDED)
    winner: str | None  # the side with the larger gain; None on a tie or with a phase nobody voted in
    paired: dict[str, dict[str, int]]  # before option -> after option -> people, among those who voted twice
    paired_voters: int
    changed: int  # of those, how many voted differently the second time

    @property
    def sides(self) -> tuple[str, ...]:
        return tuple(option for option in self.options if option != UNDECIDED)


def result(sides: Sequence[str], before: Mapping[str, str], after: Mapping[str, str]) -> Result:
    """The poll's result from each phase's votes (voter -> option). `sides`: the options other than UNDECIDED."""
    options = (*sides, UNDECIDED)
    before_counts, after_counts = tally(before, options), tally(after, options)
    before_share, after_share = shares(before_counts, options), shares(after_counts, options)
    swing = {side: after_share[side] - before_share[side] for side in sides}
    winner = None
    if sum(before_counts.values()) and sum(after_counts.values()) and sides:
        best = max(swing.values())
        leaders = [side for side in sides if swing[side] == best]
        winner = leaders[0] if len(leaders) == 1 else None
    paired = {row: dict.fromkeys(options, 0) for row in options}
    both = [voter for voter in before if voter in after and before[voter] in options and after[voter] in options]
    for voter in both:
        paired[before[voter]][after[voter]] += 1
    changed = sum(1 for voter in both if before[voter] != after[voter])
    return Result(
        options=options,
        before=before_counts,
        after=after_counts,
        before_share=before_share,
        after_share=after_share,
        swing=swing,
        winner=winner,
        paired=paired,
        paired_voters=len(both),
        changed=changed,
    )


def agrees(audience_winner: str | None, judge_winner: str | None) -> bool | None:
    """Whether the audience and the judge picked the same side; None when either picked none."""
    if not audience_winner or not judge_winner:
        return None
    return audience_winner == judge_winner


def plurality(counts: Mapping[str, int], options: Sequence[str]) -> str | None:
    """The people's choice: the option with the most votes; None when nobody voted or the most are tied."""
    best = max((counts.get(option, 0) for option in options), default=0)
    leaders = [option for option in options if counts.get(option, 0) == best]
    return leaders[0] if best and len(leaders) == 1 else None
