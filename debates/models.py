"""Debates, their seats, and their events. The events are the debate's whole state."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from chaoslm import sharing
from chaoslm.sharing import new_share_token
from debates import event_cards
from debates.formats import Format, get_format
from debates.formats.card import decide as card_decide
from debates.formats.duel import announcement_text, outscored_by
from personas.calls import LLMSettings

# What a verdict card says in place of an announcement that, asked three times, only gave its prompt back.
ECHOED = "(Asked three times, the judge only gave its instructions back: no announcement of its own to show.)"


class Debate(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "not started"
        RUNNING = "running", "running"
        WAITING = "waiting", "waiting for you"
        COMPLETED = "completed", "completed"
        ERROR = "error", "error"
        INTERRUPTED = "interrupted", "interrupted (can be resumed)"

    Visibility = sharing.Visibility

    topic = models.CharField(max_length=500)
    premise = models.CharField(max_length=500, blank=True)
    # What the debate carries beyond its topic (a passage, a question with its candidate answers, a case file),
    # up to CHAOSLM_MAX_MATERIAL characters (debates/setup.py); a card's prompts read it as a placeholder.
    material = models.TextField(blank=True)
    format = models.CharField(max_length=100, db_index=True)
    options = models.JSONField(default=dict, blank=True)
    # A debate made from a protocol card keeps the card's YAML as it was at creation: editing or deleting the
    # card later never changes a debate made from it. Empty for a built-in format.
    card_source = models.TextField(blank=True, editable=False)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING, db_index=True)
    is_ending = models.BooleanField(default=False)
    # Asked to stop (its batch paused or cancelled): the run starts no call more, lets the calls in flight land,
    # and leaves it interrupted; a run that starts finds it set and makes no call (debates/engine.py). Cleared by
    # whatever sets it going again (a batch's resume, the owner's retry or end).
    stop_requested = models.BooleanField(default=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    visibility = models.CharField(max_length=20, choices=Visibility.choices, default=Visibility.PRIVATE)
    share_token = models.CharField(max_length=64, unique=True, default=new_share_token)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error_text = models.TextField(blank=True)
    # The process that runs it (chaoslm.runner.identity), set as each run starts: once that process has ended, a
    # debate still "running" is known to have stopped and is resumed (debates/recovery.py).
    runner = models.CharField(max_length=200, blank=True)
    winner = models.CharField(max_length=100, blank=True)
    scores = models.JSONField(default=dict, blank=True)
    premise_upheld = models.BooleanField(null=True, blank=True)
    announcement = models.TextField(blank=True)
    # Started by a batch (a tournament) rather than by a person: the batch's own per-user cap counts it,
    # the personal debate cap does not (debates/limits.py).
    in_batch = models.BooleanField(default=False)
    # Whether viewers other than the owner and staff see the debaters' private thinking (PLAN, THINK):
    # the owner's choice, one rule for pages, pushes, share pages and exports (debates/privacy.py).
    show_thinking = models.BooleanField(
        default=True, help_text="Viewers other than the owner and staff see the debaters' private thinking."
    )
    # The audience's Oxford poll (audience/votes.py): its phases are read from the events and timestamps; only
    # the owner's early close of the after-vote is stored.
    audience_poll = models.BooleanField(
        default=False, help_text="The audience votes before and after the debate (two-sided formats)."
    )
    poll_closed_at = models.DateTimeField(null=True, blank=True)
    # The owner's hold (debates/hold.py): the debate does not start before this, so an audience can gather and
    # vote; None for a debate that starts at once.
    starts_at = models.DateTimeField(
        null=True, blank=True, help_text="Held until then so an audience can gather (empty: it starts at once)."
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.format}: {self.topic[:60]}"

    @property
    def fmt(self) -> Format:
        """The debate's format: its card as snapshotted at creation, else the built-in of that name."""
        return get_format(self.format, self.card_source)

    def held(self, now: datetime | None = None) -> bool:
        """Whether the owner's hold still keeps it from starting: a start time to come, and not started yet."""
        if self.starts_at is None or self.started_at is not None:
            return False
        return self.starts_at > (now or timezone.now())

    @property
    def announcement_shown(self) -> str:
        """The announcement as the verdict box shows it (debates stored before JSON replies were read included)."""
        return announcement_text(self.announcement)

    @property
    def outscored_by(self) -> str | None:
        """The debater the judge's own scores put above its winner, if any (derived from winner and scores)."""
        return outscored_by(self.winner, self.scores) if isinstance(self.scores, dict) else None

    @property
    def contradicts(self) -> bool:
        """Whether the judge's scores contradict its own confirmed winner: the verdict box flags it."""
        return self.outscored_by is not None


class FormatCard(models.Model):
    """A debate protocol written as YAML (a card): the YAML is the source of truth, the other fields follow it.

    Shipped cards (cards/*.yaml, imported by `make run`) have no owner and are public; a person's own card is
    theirs to edit, and others may use it only when it is public.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="format_cards"
    )
    name = models.SlugField(max_length=100, unique=True, editable=False, help_text="The card's name, from its YAML.")
    title = models.CharField(max_length=200, blank=True, editable=False)
    yaml = models.TextField(help_text="The card as YAML: the source of truth. The fields below follow it.")
    public = models.BooleanField(default=False, help_text="Other people may see the card and run debates with it.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Seat(models.Model):
    """A place at the table: who sits there is snapshotted, so a later persona edit cannot change a debate."""

    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="seats")
    key = models.CharField(max_length=30, help_text="The format's name for the seat: a, b, judge, moderator ...")
    role = models.CharField(max_length=20)
    side = models.CharField(max_length=20, blank=True)
    order = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=100)
    persona = models.ForeignKey("personas.Persona", null=True, blank=True, on_delete=models.SET_NULL)
    is_human = models.BooleanField(default=False)
    system_prompt = models.TextField(blank=True)
    # The endpoint and sampling settings at the start: base_url, model, provider, temperature, max_tokens...
    llm = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["order"]
        constraints = [models.UniqueConstraint(fields=["debate", "key"], name="unique_seat_key")]

    def __str__(self) -> str:
        return f"{self.name} ({self.key})"

    @property
    def llm_settings(self) -> LLMSettings:
        return LLMSettings.from_json(self.llm)


class Event(models.Model):
    class Kind(models.TextChoices):
        HEADER = "HEADER"
        PLAN = "PLAN"
        THINK = "THINK"
        TURN = "TURN"
        SCORE = "SCORE"
        VERDICT = "VERDICT"
        SYSTEM = "SYSTEM"
        USER = "USER"
        ERROR = "ERROR"
        # A call whose answer feeds a later step but is not shown (the verdict's winner check and JSON).
        INTERNAL = "INTERNAL"

    class Visibility(models.TextChoices):
        PUBLIC = "public"
        PRIVATE = "private"

    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="events")
    seat = models.ForeignKey(Seat, null=True, blank=True, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    step = models.CharField(max_length=40, blank=True, help_text="The protocol step: plan, opening, score ...")
    ordinal = models.PositiveIntegerField(help_text="The event's fixed place in the protocol.")
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC)
    prompt = models.TextField(blank=True)
    content = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    # Of tokens_in, those read from the provider's prompt cache; and the call's cost in dollars at its price when
    # it was made (chaoslm/llm/prices.py): None where the price is unknown, or the event is no call.
    tokens_cached = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=18, decimal_places=10, null=True, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The event's card, rendered once as it is saved (debates/event_cards.py).
    html = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["ordinal"]
        constraints = [models.UniqueConstraint(fields=["debate", "ordinal"], name="unique_event_ordinal")]

    def __str__(self) -> str:
        return f"{self.debate_id}#{self.ordinal} {self.kind}"

    def save(self, *args: Any, card: bool = True, **kwargs: Any) -> None:
        # Every save renders the card, so an ERROR event replaced in place (update_or_create) gets a new one.
        # Without `card`, none is kept: a page renders it when it shows the event (event_cards.cards_of).
        self.html = event_cards.render(self, self.seat) if card else ""
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "html"}
        super().save(*args, **kwargs)

    @property
    def step_label(self) -> str:
        """The step its card names after the speaker, as its format words it ("" for an ordinary turn)."""
        return self.debate.fmt.step_label(self.step)

    @property
    def side_label(self) -> str:
        """Its seat's side as the format words it ("Opening Government", not the key "og"); "" for no side."""
        if self.seat is None or not self.seat.side:
            return ""
        return self.debate.fmt.side_label(self.seat.side, self.debate.options)

    @property
    def text_shown(self) -> str:
        """The text its card shows: a verdict announcement the model wrote as JSON is read for its text, a
        SYSTEM instruction is worded for people by its format, and a speech that gives an answer in JSON reads
        as its reasoning, then its answer."""
        if self.kind == self.Kind.VERDICT:
            if self.data.get("echoed") and not self.content:
                return ECHOED
            return announcement_text(self.content)
        if self.kind == self.Kind.SYSTEM:
            return self.debate.fmt.system_line(self.content)
        return card_decide.spoken(self.content, self.data)
