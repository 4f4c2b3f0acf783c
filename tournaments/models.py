"""Tournaments: many debates over a question set, judged by a panel. Their rows are the whole state.

Progress is never counted in a field: it is derived from the matches and judgments and their debates'
statuses (batches/schedule.py), so a tournament resumes after any crash with nothing lost or run
twice. A match's debate and a judgment's replay are ordinary debates, created at most once (one-to-one
links, created under the tournament's row lock).
"""

from __future__ import annotations

from django.db import models

from audience import models as audience_models
from batches import models as batch_models
from debates.formats import DEFAULT_FORMAT, Format, get_format
from debates.models import Debate


class Tournament(batch_models.BatchRecord):
    class Sides(models.TextChoices):
        BOTH = "both", "both: every pair debates every question once on each side"
        ONCE = "once", "once: every pair debates every question once"

    # Its formats, comma-separated in the order given ("duel", "duel,structured"): every pairing debates once in each.
    # Room for several formats of the longest names (100 characters each).
    format = models.CharField(max_length=1000, default=DEFAULT_FORMAT)
    # The YAML of each protocol card among its formats, by name, as it was when the tournament was made: editing or
    # deleting a card later changes none of its debates.
    cards = models.JSONField(default=dict, blank=True)
    # The formats' options (turns, free_turns, questions, word_limit): each match gets those its format has.
    options = models.JSONField(default=dict, blank=True)
    sides = models.CharField(max_length=10, choices=Sides.choices, default=Sides.BOTH)
    repeats = models.PositiveSmallIntegerField(default=1)
    arena = models.BooleanField(
        "In the arena",
        default=False,
        help_text="Its finished matches are served, without names, to anyone who votes in the arena (/arena/).",
    )

    @property
    def formats(self) -> list[str]:
        return self.format.split(",")

    @property
    def formats_line(self) -> str:
        """What its debates are, for its page: each format's title with the options the tournament sets for it
        ("Judged duel debates (turns 4) and Structured debates (questions 2)")."""
        parts = []
        for name in self.formats:
            fmt = self.format_of(name)
            given = [f"{o.label.lower()} {self.options[o.name]}" for o in fmt.option_specs if o.name in self.options]
            parts.append(f"{fmt.title} debates" + (f" ({', '.join(given)})" if given else ""))
        return " and ".join(parts)

    @property
    def ranks_teams(self) -> bool:
        """Whether every one of its formats ranks more than two teams (its matches table then lists teams)."""
        return all(self.format_of(name).ranks_teams() for name in self.formats)

    def format_of(self, name: str) -> Format:
        """One of its formats: a built-in, or a card as the tournament snapshotted it."""
        return get_format(name, self.cards.get(name, ""))


class Entrant(batch_models.PersonaSnapshot):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entrants")

    class Meta(batch_models.PersonaSnapshot.Meta):
        constraints = [batch_models.unique_snapshot_names("tournament")]


class Question(batch_models.BatchQuestion):
    class Correct(models.TextChoices):
        NONE = "", "unknown"
        FOR = "for", "for"
        AGAINST = "against", "against"

    text = "topic"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="questions")
    topic = models.CharField(max_length=500)
    premise = models.CharField(max_length=500, blank=True)
    correct = models.CharField(max_length=10, choices=Correct.choices, blank=True)

    class Meta(batch_models.BatchQuestion.Meta):
        constraints = [models.UniqueConstraint(fields=["tournament", "index"], name="unique_question_index")]


class Match(models.Model):
    """One debate of the tournament's: a question, a FOR debater and an AGAINST debater, in one of its formats; its
    debate once created."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="matches")
    order = models.PositiveIntegerField()
    format = models.CharField(max_length=100, default=DEFAULT_FORMAT)
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="matches")
    debater_for = models.ForeignKey(Entrant, on_delete=models.CASCADE, related_name="matches_for")
    debater_against = models.ForeignKey(Entrant, on_delete=models.CASCADE, related_name="matches_against")
    # A format of more than two sides (teams a judge ranks): the entrants' ids, one per side in the format's side
    # order, each filling every seat of its side (debater_for and debater_against are then the first two). Empty for
    # a two-sided match, whose sides are debater_for and debater_against.
    sides = models.JSONField(default=list, blank=True)
    debate = models.OneToOneField(
        Debate, null=True, blank=True, on_delete=models.SET_NULL, related_name="tournament_match"
    )
    # How many times its debate was started after failing, plus one: a failed debate is retried once.
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order"]
        verbose_name_plural = "matches"
        constraints = [
            models.UniqueConstraint(fields=["tournament", "order"], name="unique_match_order"),
            models.UniqueConstraint(
                fields=["tournament", "format", "question", "debater_for", "debater_against", "sides"],
                name="unique_match_sides",
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.order} of tournament {self.tournament_id}"

    @property
    def entrant_ids(self) -> list[int]:
        """Its entrants' ids, one per side, in the format's side order."""
        return list(self.sides) or [self.debater_for_id, self.debater_against_id]


class Judgment(models.Model):
    """A judge's verdict on a match's transcript. In a format with a judge's seat (a duel), the first judge's repeat 0
    judges inside the match's debate itself (`in_debate`); every other judgment is a judge-only replay over the
    debate's public turns (its format's `replayed_by`: "judge" for a duel, "sides_judge" for a classic or structured
    debate, which have no judge of their own)."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(Entrant, on_delete=models.CASCADE, related_name="judgments")
    repeat = models.PositiveSmallIntegerField(default=0)
    in_debate = models.BooleanField(default=False)
    debate = models.OneToOneField(
        Debate, null=True, blank=True, on_delete=models.SET_NULL, related_name="tournament_judgment"
    )
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["match__order", "judge__order", "repeat"]
        constraints = [models.UniqueConstraint(fields=["match", "judge", "repeat"], name="unique_judgment")]

    def __str__(self) -> str:
        return f"{self.judge_id} on match {self.match_id} (repeat {self.repeat})"


class ArenaVote(audience_models.ArenaVoteBase):
    """One person's blind vote on a match in the arena: Debater 1 (the match's FOR side), Debater 2 (AGAINST) or a
    tie. One per match and voter; the last one counts (audience/arena.py)."""

    class Choice(models.TextChoices):
        FIRST = "1", "Debater 1"
        SECOND = "2", "Debater 2"
        TIE = "tie", "A tie"

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="arena_votes")
    choice = models.CharField(max_length=4, choices=Choice.choices)

    class Meta:
        constraints = [audience_models.one_vote_per("match")]
