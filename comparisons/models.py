"""Comparisons: protocols whose outcome carries an answer ("arms": cards with a decision, built-in formats) run on
the same questions with known answers, each question under each arm one debate. Its rows are the whole state:
progress is derived from the runs and their debates' statuses (batches/schedule.py), so a comparison resumes after
any crash with nothing run twice. A run's debate is an ordinary debate of its arm's format, created at most once (a
one-to-one link, created under the comparison's row lock); its grade is read from the finished debate, never
stored, so the report is always the stored debates' own."""

from __future__ import annotations

from django.db import models

from batches import models as batch_models
from debates.models import Debate


class Comparison(batch_models.BatchRecord):
    # The arms, in the report's order: each {"name", "format", "card_source", "seats": {seat key: persona spec},
    # "options"}, the card's YAML and the personas as they were when the comparison was made.
    arms = models.JSONField(default=list)


class Question(batch_models.BatchQuestion):
    """A question with its gold answer (comparisons/question_sets.py's GoldQuestion, as stored)."""

    text = "question"

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="questions")
    ident = models.CharField(max_length=100)  # the question's id in its file (its line, when it had none)
    kind = models.CharField(max_length=20)  # multiple_choice, numeric or short_answer
    question = models.TextField()
    choices = models.JSONField(default=list, blank=True)
    answer = models.CharField(max_length=1000)
    material = models.TextField(blank=True)

    class Meta(batch_models.BatchQuestion.Meta):
        constraints = [models.UniqueConstraint(fields=["comparison", "index"], name="unique_comparison_question")]


class Run(models.Model):
    """One question under one arm (its index in `Comparison.arms`): one debate."""

    comparison = models.ForeignKey(Comparison, on_delete=models.CASCADE, related_name="runs")
    order = models.PositiveIntegerField()
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="runs")
    arm = models.PositiveSmallIntegerField()
    debate = models.OneToOneField(
        Debate, null=True, blank=True, on_delete=models.SET_NULL, related_name="comparison_run"
    )
    # How many times its debate was started after failing, plus one: a failed debate is retried once.
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order"]
        constraints = [
            models.UniqueConstraint(fields=["comparison", "order"], name="unique_comparison_run_order"),
            models.UniqueConstraint(fields=["question", "arm"], name="unique_comparison_run"),
        ]

    def __str__(self) -> str:
        return f"run {self.order} of comparison {self.comparison_id}"
