"""Providers (OpenAI-compatible endpoints) and personas (YAML, the text a user edits)."""

from __future__ import annotations

import os
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models, transaction

from chaoslm.llm import Endpoint, prices
from chaoslm.llm.endpoints import default_endpoint
from personas.yaml_io import ROLES, PersonaSpec, PersonaYAMLError, dump_persona, parse_personas

JSON_MODES = [
    ("json_schema", "json_schema (OpenAI, vLLM, recent llama.cpp)"),
    ("json_object", "json_object with llama.cpp's schema field (Ollama, LM Studio, llama.cpp)"),
    ("text", "plain text: the prompt asks for JSON, ChaosLM parses it"),
]


# The largest context window a provider may claim (tokens): the biggest models' are around ten million.
MAX_CONTEXT_WINDOW = 10_000_000


class Provider(models.Model):
    name = models.CharField(max_length=100, unique=True)
    base_url = models.URLField(
        max_length=500, help_text="The OpenAI-compatible base URL, e.g. http://localhost:11434/v1 for Ollama."
    )
    api_key_env = models.CharField(
        "API key variable",
        max_length=100,
        blank=True,
        help_text="The name of the environment variable that holds the API key. "
        "Keys are never stored in the database. Leave empty for servers that need none.",
    )
    default_model = models.CharField(max_length=200)
    context_window = models.PositiveIntegerField(default=8192, help_text="The model's context size in tokens.")
    json_mode = models.CharField(
        "JSON replies",
        max_length=20,
        choices=JSON_MODES,
        default="json_object",
        help_text="How to ask this endpoint for JSON. Choose json_schema where it supports it.",
    )
    # The admin's prices, in dollars per million tokens, for every model of this provider; empty: genai-prices'
    # by the model's name (chaoslm/llm/prices.py), or unknown. Both input and output set, or neither.
    input_price = models.DecimalField(
        "input price",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="Dollars per million input tokens. Empty: the price genai-prices knows for the model, if any.",
    )
    output_price = models.DecimalField(
        "output price",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="Dollars per million output tokens (set with the input price).",
    )
    cached_input_price = models.DecimalField(
        "cached input price",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="Dollars per million input tokens read from the provider's prompt cache. Empty: the input price.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.api_key_env and not self.api_key_env.replace("_", "").isalnum():
            raise ValidationError({"api_key_env": "An environment variable name: letters, digits and _ only."})
        # Bounded here rather than by a field validator: the same check, without a migration.
        if not 1 <= self.context_window <= MAX_CONTEXT_WINDOW:
            raise ValidationError({"context_window": f"From 1 to {MAX_CONTEXT_WINDOW:,} tokens."})
        if (self.input_price is None) != (self.output_price is None):
            raise ValidationError({"output_price": "Set both the input and the output price, or neither."})
        if self.cached_input_price is not None and self.input_price is None:
            raise ValidationError({"cached_input_price": "Set the input and output prices too."})

    @property
    def price(self) -> prices.Price | None:
        """The admin's price for this provider's calls, if set."""
        if self.input_price is None or self.output_price is None:
            return None
        return prices.Price(self.input_price, self.output_price, self.cached_input_price, f"set for {self.name}")

    def endpoint(self, model: str = "") -> Endpoint:
        return Endpoint(
            name=self.name,
            base_url=self.base_url,
            api_key=os.environ.get(self.api_key_env, "") if self.api_key_env else "",
            model=model or self.default_model,
            context_window=self.context_window,
            json_mode=self.json_mode,  # type: ignore[arg-type]
            price=self.price,
        )


class Persona(models.Model):
    name = models.CharField(max_length=100, unique=True)
    role = models.CharField("role hint", max_length=20, choices=[(r, r) for r in ROLES], db_index=True)
    yaml = models.TextField(help_text="The persona as YAML: the source of truth. The fields below follow it.")
    personality = models.TextField(editable=False)
    position = models.TextField(blank=True, editable=False)
    instructions = models.TextField(blank=True, editable=False)
    judging_criteria = models.TextField(blank=True, editable=False)
    model = models.CharField(max_length=200, blank=True, editable=False)
    provider = models.ForeignKey(Provider, null=True, blank=True, on_delete=models.PROTECT, editable=False)
    temperature = models.FloatField(null=True, blank=True, editable=False)
    max_tokens = models.PositiveIntegerField(null=True, blank=True, editable=False)
    formats = models.JSONField(default=list, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def spec(self) -> PersonaSpec:
        return PersonaSpec(
            name=self.name,
            role=self.role,
            personality=self.personality,
            position=self.position,
            instructions=self.instructions,
            judging_criteria=self.judging_criteria,
            model=self.model,
            provider=self.provider.name if self.provider else "",
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            formats=tuple(self.formats),
        )

    def apply_spec(self, spec: PersonaSpec, source: str = "persona") -> None:
        """Copy a parsed spec onto this row (YAML included); raise PersonaYAMLError on an unknown provider."""
        provider = None
        if spec.provider:
            provider = Provider.objects.filter(name=spec.provider).first()
            if provider is None:
                raise PersonaYAMLError(source, "provider", f"no provider is named {spec.provider!r}")
        self.name = spec.name
        self.role = spec.role
        self.personality = spec.personality
        self.position = spec.position
        self.instructions = spec.instructions
        self.judging_criteria = spec.judging_criteria
        self.model = spec.model
        self.provider = provider
        self.temperature = spec.temperature
        self.max_tokens = spec.max_tokens
        self.formats = list(spec.formats)
        self.yaml = dump_persona(spec)

    def offered_in(self, format_name: str) -> bool:
        """Whether the seats of `format_name` offer this persona (its YAML's `formats`, empty for all)."""
        return not self.formats or format_name in self.formats

    def endpoint(self) -> Endpoint:
        if self.provider is not None:
            return self.provider.endpoint(self.model)
        return default_endpoint(self.model)


class Budget(models.Model):
    """What one user may spend on models in a calendar month (chaoslm/costs.py); no row: the default setting."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="budget")
    monthly = models.DecimalField(
        "monthly budget",
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="Dollars a calendar month (UTC). Empty: no budget for this user, whatever the default.",
    )

    class Meta:
        ordering = ["user__username"]

    def __str__(self) -> str:
        return f"{self.user}: {'no budget' if self.monthly is None else f'${self.monthly}'}"


def import_personas(
    files: list[tuple[str, str | bytes]], *, update: bool = False, missing_only: bool = False
) -> list[Persona]:
    """Import personas from (source name, text) pairs, all or nothing; return those written.

    Every file is parsed and checked first; only then is anything written, in one transaction.
    With `update`, a persona whose name exists is replaced; with `missing_only`, it is kept as it is (an
    edit made in the admin stays); with neither, that is an error.
    """
    parsed: list[tuple[str, PersonaSpec]] = []
    errors: list[PersonaYAMLError] = []
    for source, text in files:
        try:
            parsed.extend((source, spec) for spec in parse_personas(text, source))
        except PersonaYAMLError as error:
            errors.append(error)
    if errors:
        raise PersonaYAMLError.of(errors)
    seen: dict[str, str] = {}
    for source, spec in parsed:
        if spec.name in seen:
            raise PersonaYAMLError(source, "name", f"{spec.name!r} is also defined in {seen[spec.name]}")
        seen[spec.name] = source
    existing = {p.name: p for p in Persona.objects.filter(name__in=seen)}
    if missing_only:
        parsed = [(source, spec) for source, spec in parsed if spec.name not in existing]
        existing = {}
    if existing and not update:
        name = sorted(existing)[0]
        raise PersonaYAMLError(seen[name], "name", f"a persona named {name!r} already exists")
    saved: list[Persona] = []
    with transaction.atomic():
        for source, spec in parsed:
            persona = existing.get(spec.name) or Persona()
            persona.apply_spec(spec, source)
            persona.save()
            saved.append(persona)
    return saved
