"""Experiments: a question set with passages, run under several protocols (evidence debate, consultancy, blind,
oracle) by debater personas before a panel of judges, each answer order presented both ways. Its rows are the
whole state: progress is derived from the runs and their debates' statuses (tournaments/schedule.py), so an
experiment resumes after any crash with nothing run twice. A run's debate is an ordinary debate of the
protocol's format, created at most once (a one-to-one link, created under the experiment's row lock).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from chaoslm.personas.yaml_io import PersonaSpec, spec_from_mapping
from chaoslm.sharing import Visibility
from debates.models import Debate, new_share_token


class Experiment(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "running"
        PAUSED = "paused", "paused"
        CANCELLED = "cancelled", "cancelled"
        COMPLETED = "completed", "completed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    name = models.CharField(max_length=200)
    # The protocols run, in the report's order: evidence_debate, consultancy, blind, oracle.
    protocols = models.JSONField(default=list)
    # The protocols' options (rounds, word_limit, simultaneous), each given to the formats that have it.
    options = models.JSONField(default=dict, blank=True)
    concurrency = models.PositiveSmallIntegerField(default=8)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING, db_index=True)
    visibility = models.CharField(max_length=20, choices=Visibility.choices, default=Visibility.PRIVATE)
    share_token = models.CharField(max_length=64, unique=True, default=new_share_token)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The Celery tick chain (tournaments/batches.py): only the task carrying this token re-enqueues itself.
    tick_token = models.CharField(max_length=32, blank=True)
    ticked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name}"


class Participant(models.Model):
    """A debater (also the consultant) or a judge: the persona as it was when the experiment was made."""

    class Role(models.TextChoices):
        DEBATER = "debater"
        JUDGE = "judge"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="participants")
    role = models.CharField(max_length=10, choices=Role.choices)
    order = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=100)
    persona = models.ForeignKey("personas.Persona", null=True, blank=True, on_delete=models.SET_NULL)
    spec = models.JSONField(default=dict)

    class Meta:
        ordering = ["role", "order"]
        constraints = [
            models.UniqueConstraint(fields=["experiment", "role", "name"], name="unique_participant_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.role})"

    def persona_spec(self) -> PersonaSpec:
        return spec_from_mapping(self.spec, f"experiment {self.experiment_id}: {self.name}")


class Question(models.Model):
    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="questions")
    index = models.PositiveIntegerField()
    passage = models.TextField()
    question = models.CharField(max_length=500)
    answers = models.JSONField()  # exactly two texts, as imported
    correct = models.PositiveSmallIntegerField(null=True, blank=True)  # 0 or 1; None when unknown

    class Meta:
        ordering = ["index"]
        constraints = [models.UniqueConstraint(fields=["experiment", "index"], name="unique_experiment_question")]

    def __str__(self) -> str:
        return self.question


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
