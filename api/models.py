"""Personal API tokens, and the webhooks a user registers with their deliveries."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models

TOKEN_PREFIX = "chaoslm_"  # noqa: S105  (a label, not a secret)


def token_digest(raw: str) -> str:
    """What is stored of a token: its SHA-256. The token is random (32 bytes), so no salt or slow hash is needed."""
    return hashlib.sha256(raw.encode()).hexdigest()


def new_raw_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class ApiToken(models.Model):
    """A personal token: `Authorization: Bearer <token>`. Only its digest is kept; it is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    read_only = models.BooleanField(default=True, help_text="A read-only token may read but not change anything.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    # The first characters, so a person can tell their tokens apart without the secret.
    prefix = models.CharField(max_length=16, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Webhook(models.Model):
    # A debate's and a room's events; each kind of batch's `<kind>.finished` is read from the registry
    # (api/webhooks.py: event_kinds).
    class Kind(models.TextChoices):
        DEBATE_FINISHED = "debate.finished", "a debate finished"
        DEBATE_FAILED = "debate.failed", "a debate failed"
        ROOM_STOPPED = "room.stopped", "a room left auto mode"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    # Shared with the receiver to check the signature: kept as it is, since signing needs it.
    secret = models.CharField(max_length=100)
    events = models.JSONField(default=list, help_text="The event kinds sent to this address.")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.url


class Delivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed (gave up)"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    kind = models.CharField(max_length=40)
    # What happened, once: the same debate finishing is one delivery however often its row is saved.
    key = models.CharField(max_length=120)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["webhook", "key"], name="unique_delivery_key")]
        verbose_name_plural = "deliveries"

    def __str__(self) -> str:
        return f"{self.kind} → {self.webhook_id} ({self.status})"


class BatchEvent(models.Model):
    """What a batch's event stream tells (api/batch_events.py): one of its debates reached an end. `seq` counts a
    batch's events 1, 2, 3 ... in the order they were committed, so a client resuming after one misses none."""

    kind = models.CharField(max_length=20)  # the batch's kind: tournament, experiment
    batch_id = models.PositiveIntegerField()
    seq = models.PositiveIntegerField()
    debate_id = models.PositiveIntegerField()
    # What happened, once: the same debate's end saved again is not told twice.
    key = models.CharField(max_length=120)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "batch_id", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "batch_id", "seq"], name="unique_batch_event_seq"),
            models.UniqueConstraint(fields=["kind", "batch_id", "key"], name="unique_batch_event_key"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.batch_id} #{self.seq}"


class BatchEventCounter(models.Model):
    """A batch's last `seq`: its row is locked while an event is added, so the numbers follow the commits."""

    kind = models.CharField(max_length=20)
    batch_id = models.PositiveIntegerField()
    last = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "batch_id"], name="unique_batch_event_counter")]

    def __str__(self) -> str:
        return f"{self.kind} {self.batch_id}: {self.last}"
