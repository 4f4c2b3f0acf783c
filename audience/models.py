"""What the audience's votes store: a debate's poll votes (`PollVote`, audience/votes.py), and what every arena's
vote has (`ArenaVoteBase`, abstract: each kind's vote table stays beside what it votes on, tournaments.Match and
experiments.Run, which sit above this app)."""

from __future__ import annotations

from django.db import models

from debates.models import Debate


class PollVote(models.Model):
    """One person's vote in one phase of a debate's poll: the last one they cast while it was open.

    `voter` is "user:<id>" for a signed-in person or "anon:<random id>" from a signed cookie; the
    constraint makes a second vote an update of the first, whatever the timing. Nobody is ever shown
    who voted what: pages and exports read counts only.
    """

    class Phase(models.TextChoices):
        BEFORE = "before"
        AFTER = "after"

    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="poll_votes")
    phase = models.CharField(max_length=10, choices=Phase.choices)
    voter = models.CharField(max_length=64)
    choice = models.CharField(max_length=30)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["debate", "phase", "voter"], name="one_vote_per_phase")]

    def __str__(self) -> str:
        return f"{self.debate_id} {self.phase}"


class ArenaVoteBase(models.Model):
    """One person's blind vote in an arena (audience/arena.py): each kind's vote adds what is voted on (a foreign
    key), the choice and the unique constraint on the two. `voter` is "user:<id>" or an anonymous cookie's
    "anon:<id>"; `excluded`: the transcript the voter read still named someone, so the vote is kept but left
    out of the report's figures."""

    voter = models.CharField(max_length=64)
    excluded = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        item = next(f for f in self._meta.concrete_fields if f.is_relation)
        return f"arena vote on {getattr(self, item.attname)}"


def one_vote_per(item: str) -> models.UniqueConstraint:
    """A kind's votes hold one vote per voter on each `item` (their foreign key to what is voted on); the
    constraint is named for it (`one_arena_vote_per_match`)."""
    return models.UniqueConstraint(fields=[item, "voter"], name=f"one_arena_vote_per_{item}")
