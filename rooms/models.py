"""Chat rooms: a person and several personas talking, the person steering (docs/protocols/rooms.md)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from chaoslm import sharing
from chaoslm.sharing import new_share_token
from personas.calls import LLMSettings

# The most messages an auto-mode run may be set to (besides 0, no limit but the context window's).
MAX_MESSAGES = 1000


def new_seed() -> int:
    return secrets.randbelow(2**31)


class Room(models.Model):
    class Mode(models.TextChoices):
        MANUAL = "manual", "manual"
        AUTO = "auto", "auto"

    # The same rules as every shared thing (chaoslm/sharing.py).
    Visibility = sharing.Visibility

    title = models.CharField(max_length=200)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    visibility = models.CharField(max_length=20, choices=Visibility.choices, default=Visibility.PRIVATE)
    share_token = models.CharField(max_length=64, unique=True, default=new_share_token)
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.MANUAL)
    # The turn queue (rooms.queue.Queue as JSON): persisted, so it survives a reload or a restart.
    queue = models.JSONField(default=dict, blank=True)
    response_delay = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(30)],
        help_text="Seconds between messages in auto mode (1-30).",
    )
    max_messages = models.PositiveIntegerField(
        default=20, help_text="Auto mode stops after this many messages (0: no limit)."
    )
    max_wait = models.PositiveSmallIntegerField(
        default=60,
        validators=[MinValueValidator(5), MaxValueValidator(600)],
        help_text="Seconds to wait for an agent's answer.",
    )

    class TurnOrder(models.TextChoices):
        ROUND_ROBIN = "round_robin", "round robin (the order they joined)"
        SELECTOR = "selector", "selector (a model picks who is next)"
        PICK = "pick", "pick (you choose who is next)"

    # In auto mode (rooms/queue.py); @mentions come first in every order.
    turn_order = models.CharField(max_length=20, choices=TurnOrder.choices, default=TurnOrder.ROUND_ROBIN)
    selector = models.ForeignKey(
        "personas.Persona",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The persona whose model picks the next speaker; empty: the default model.",
    )
    selector_repeat = models.BooleanField(default=False, help_text="May the selector name the agent who just spoke?")

    class Memory(models.TextChoices):
        SUMMARIZE = "summarize", "summarise at 80 % (fold the oldest messages)"
        STOP = "stop", "stop auto mode at 95 % (no summary)"

    memory = models.CharField(max_length=20, choices=Memory.choices, default=Memory.SUMMARIZE)
    summarizer = models.ForeignKey(
        "personas.Persona",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The persona whose model writes the summaries; empty: the default model.",
    )
    # Seeds the agents' talkativeness draws (rooms/queue.py, `asked`), so a room's run can be replayed.
    seed = models.PositiveIntegerField(default=new_seed, editable=False)
    messages_since_auto = models.PositiveIntegerField(default=0)
    # The owner took the floor (an interrupt): the answer being written is kept as an inactive partial.
    interrupted = models.BooleanField(default=False, editable=False)
    pause_reason = models.CharField(max_length=300, blank=True)
    retry_at = models.DateTimeField(null=True, blank=True)
    # Until when a process running this room's round or auto loop holds it (rooms/hold.py, `holding`).
    held_until = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        # Bounded here, where the settings form and the admin both check, rather than by a field validator
        # (which would need a migration).
        if self.max_messages is not None and self.max_messages > MAX_MESSAGES:
            raise ValidationError({"max_messages": f"At most {MAX_MESSAGES} (or 0 for no limit)."})


class RoomAgent(models.Model):
    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="agents")
    persona = models.ForeignKey("personas.Persona", null=True, on_delete=models.SET_NULL)
    name = models.CharField(max_length=100)
    role = models.CharField(max_length=20, blank=True)
    system_prompt = models.TextField()
    llm = models.JSONField(default=dict, blank=True)
    participating = models.BooleanField(default=True)
    # Whether a selector room's selector may name this agent.
    candidate = models.BooleanField(default=True)
    # Presence: an agent sees the messages after `joined_after` (the newest message's id when it joined),
    # unless the owner lets it see the earlier ones too.
    joined_after = models.PositiveIntegerField(default=0, editable=False)
    sees_earlier = models.BooleanField(default=False)
    talkativeness = models.PositiveSmallIntegerField(
        default=100,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="The chance (%) it is asked when its turn comes in auto mode; 0: only when @mentioned.",
    )

    class Meta:
        ordering = ["pk"]
        constraints = [models.UniqueConstraint(fields=["room", "name"], name="unique_agent_name_in_room")]

    def __str__(self) -> str:
        return self.name

    @property
    def llm_settings(self) -> LLMSettings:
        return LLMSettings.from_json(self.llm)

    @property
    def label(self) -> str:
        return f"{self.name} | {self.role}" if self.role else self.name


class RoomMessage(models.Model):
    class Kind(models.TextChoices):
        USER = "user"
        AGENT = "agent"
        SYSTEM = "system"
        ERROR = "error"
        PENDING = "pending"
        SUMMARY = "summary"  # the oldest messages folded into one, written by the room's summarizer

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="messages")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    agent = models.ForeignKey(RoomAgent, null=True, blank=True, on_delete=models.SET_NULL)
    author = models.CharField(max_length=100, blank=True)
    content = models.TextField(blank=True)
    # Only active messages go into the agents' next requests; any message can be toggled.
    active = models.BooleanField(default=True)
    # A whisper: the ids of the only agents that ever have it in their context; empty: everyone.
    audience = models.JSONField(default=list, blank=True)
    # Set once the message is folded into a summary: agents then see the summary instead (rooms/summaries.py).
    folded_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    data = models.JSONField(default=dict, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    # As a debate's Event: cached input tokens, and the call's cost (None: unknown price, or no call).
    tokens_cached = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=18, decimal_places=10, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.kind} {self.author}: {self.content[:40]}"


class RoomTemplate(models.Model):
    """A room's agents (in order, with their talkativeness), its turn order and its settings, to start rooms from."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="room_templates")
    name = models.CharField(max_length=200)
    # {"agents": [{"persona": id, "talkativeness": n, "candidate": bool}], "room": {field: value}}
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="unique_room_template_name")]

    def __str__(self) -> str:
        return self.name
