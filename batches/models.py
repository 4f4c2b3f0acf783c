"""What every batch of debates stores (a tournament, an experiment): abstract models, so each kind keeps its own
tables (and this app has none)."""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models

from chaoslm.sharing import Visibility
from debates.models import new_share_token
from personas.yaml_io import PersonaSpec, spec_from_mapping


class BatchRecord(models.Model):
    """What every batch of debates stores (a tournament, an experiment): batches/kinds.py runs any of them."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        PAUSED = "paused", "paused"
        CANCELLED = "cancelled", "cancelled"
        COMPLETED = "completed", "completed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    name = models.CharField(max_length=200)
    concurrency = models.PositiveSmallIntegerField(default=8)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING, db_index=True)
    visibility = models.CharField(max_length=20, choices=Visibility.choices, default=Visibility.PRIVATE)
    share_token = models.CharField(max_length=64, unique=True, default=new_share_token)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The Celery tick chain: only the task carrying this token re-enqueues itself (batches/kinds.py).
    tick_token = models.CharField(max_length=32, blank=True)
    ticked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name}"


class PersonaSnapshot(models.Model):
    """A debater or a judge of a batch: the persona as it was when the batch was made."""

    class Role(models.TextChoices):
        DEBATER = "debater"
        JUDGE = "judge"
        MODERATOR = "moderator"  # a tournament of classic debates: it leads each one

    role = models.CharField(max_length=10, choices=Role.choices)
    order = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=100)
    persona = models.ForeignKey("personas.Persona", null=True, blank=True, on_delete=models.SET_NULL)
    spec = models.JSONField(default=dict)

    class Meta:
        abstract = True
        ordering = ["role", "order"]

    def __str__(self) -> str:
        return f"{self.name} ({self.role})"

    def batch_label(self) -> str:
        """Which batch it belongs to, for error messages ("tournament 3"): the one its foreign key to a batch names."""
        link = next(f for f in self._meta.concrete_fields if f.is_relation and issubclass(f.related_model, BatchRecord))
        return f"{link.related_model._meta.model_name} {getattr(self, link.attname)}"

    def persona_spec(self) -> PersonaSpec:
        return spec_from_mapping(self.spec, f"{self.batch_label()}: {self.name}")


def unique_snapshot_names(batch_link: str) -> models.UniqueConstraint:
    """A kind's snapshots hold a persona's name once per role in a batch (`batch_link`, their foreign key to it);
    the constraint is named for the model (`unique_entrant_name`)."""
    return models.UniqueConstraint(fields=[batch_link, "role", "name"], name="unique_%(class)s_name")


class BatchQuestion(models.Model):
    """A question of a batch's set, at its place in it (`index`, from 0); each kind adds its foreign key to the batch,
    its texts (`text` names the one it is shown by) and the unique constraint on the batch and `index`."""

    text: ClassVar[str]

    index = models.PositiveIntegerField()

    class Meta:
        abstract = True
        ordering = ["index"]

    def __str__(self) -> str:
        return str(getattr(self, self.text))
