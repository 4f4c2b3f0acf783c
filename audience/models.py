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
