"""Experiments: a question set with passages, run under several protocols (evidence debate, consultancy, blind,
oracle) by debater personas before a panel of judges, each answer order presented both ways. Its rows are the
whole state: progress is derived from the runs and their debates' statuses (batches/schedule.py), so an
experiment resumes after any crash with nothing run twice. A run's debate is an ordinary debate of the
protocol's format, created at most once (a one-to-one link, created under the experiment's row lock).
"""

from __future__ import annotations

from django.db import models

from audience import models as audience_models
from batches import models as batch_models
from debates.models import Debate


class Experiment(batch_models.BatchRecord):
    # The protocols run, in the report's order: evidence_debate, consultancy, blind, oracle.
    protocols = models.JSONField(default=list)
    # The protocols' options (rounds, word_limit, simultaneous), each given to the formats that have it.
    options = models.JSONField(default=dict, blank=True)
    arena = models.BooleanField(
        "In the arena",
        default=False,
        help_text="Its finished evidence debates are served, without names, to anyone who answers in the arena "
        "(/arena/evidence/).",
    )


class Participant(batch_models.PersonaSnapshot):
    """A debater (also the consultant) or a judge: the persona as it was when the experiment was made."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="participants")

    class Meta(batch_models.PersonaSnapshot.Meta):
        constraints = [batch_models.unique_snapshot_names("experiment")]


class Question(batch_models.BatchQuestion):
    text = "question"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="questions")
    passage = models.TextField()
    question = models.CharField(max_length=500)
    answers = models.JSONField()  # exactly two texts, as imported
    correct = models.PositiveSmallIntegerField(null=True, blank=True)  # 0 or 1; None when unknown

    class Meta(batch_models.BatchQuestion.Meta):
        constraints = [models.UniqueConstraint(fields=["experiment", "index"], name="unique_experiment_question")]


class Run(models.Model):
    """One judged run: a question under a protocol, its answers in one order, before one judge.

    `first` argues the question's answer 0 and `second` its answer 1 (a debate); a consultant is `first` and
    argues answer `assigned`. `swapped` presents answer 1 as A: the seats follow the answers, so the runs that
    differ only in `swapped` differ only in the order the judge reads the answers. A run with a `source` makes
    no debate of its own: its judge reads the source's."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="runs")
    order = models.PositiveIntegerField()
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="runs")
    protocol = models.CharField(max_length=20)
    swapped = models.BooleanField(default=False)
    judge = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="judged_runs")
    first = models.ForeignKey(
        Participant, null=True, blank=True, on_delete=models.CASCADE, related_name="runs_arguing_first"
    )
    second = models.ForeignKey(
        Participant, null=True, blank=True, on_delete=models.CASCADE, related_name="runs_arguing_second"
    )
    assigned = models.PositiveSmallIntegerField(null=True, blank=True)
    # Another judge's run of the same debate: this run's judge reads that run's debate again (a judge-only
    # `evidence_judge` replay), so a panel judges one transcript.
    source = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="replays")
    debate = models.OneToOneField(
        Debate, null=True, blank=True, on_delete=models.SET_NULL, related_name="experiment_run"
    )
    # How many times its debate was started after failing, plus one: a failed debate is retried once.
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order"]
        constraints = [models.UniqueConstraint(fields=["experiment", "order"], name="unique_run_order")]

    def __str__(self) -> str:
        return f"run {self.order} of experiment {self.experiment_id}"


class ArenaVote(audience_models.ArenaVoteBase):
    """One person's blind answer to an evidence debate in the arena (experiments/arena.py): the answer they believe
    correct, as the letter it was shown under (A or B, the run's order). One per debate and voter; the last one
    counts (audience/arena.py). The vote is on the run that holds the debate (a panel's replays read the same one)."""

    class Choice(models.TextChoices):
        A = "A", "Answer A"
        B = "B", "Answer B"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="arena_votes")
    choice = models.CharField(max_length=1, choices=Choice.choices)

    class Meta:
        constraints = [audience_models.one_vote_per("run")]
