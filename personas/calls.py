"""Calling a persona: the one snapshot of its LLM settings, the endpoint it resolves to, the options it sends.

A debate's seat and a room's agent store an `LLMSettings` snapshot (as JSON) when they are created, so a
later persona edit cannot change them. Every caller builds its endpoint and its `ChatOptions` here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chaoslm.llm import ChatOptions, Endpoint
from chaoslm.llm.endpoints import default_endpoint
from personas.models import Persona, Provider
from personas.yaml_io import PersonaSpec


class UnknownProvider(ValueError):
    """A persona names a provider that does not exist; the message says which."""


@dataclass(frozen=True)
class LLMSettings:
    provider_id: int | None = None
    model: str = ""
    temperature: float | None = None
    max_tokens: int | None = None

    @classmethod
    def of_persona(cls, persona: Persona) -> LLMSettings:
        return cls.of_spec(persona.spec(), provider_id=persona.provider_id)

    @classmethod
    def of_spec(cls, spec: PersonaSpec, provider_id: int | None = None) -> LLMSettings:
        """A persona spec's settings; a spec from a YAML file names its provider, resolved here."""
        if provider_id is None and spec.provider:
            provider = Provider.objects.filter(name=spec.provider).first()
            if provider is None:
                raise UnknownProvider(f"Persona {spec.name!r} names a provider {spec.provider!r} that does not exist.")
            provider_id = provider.pk
        return cls(provider_id=provider_id, model=spec.model, temperature=spec.temperature, max_tokens=spec.max_tokens)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LLMSettings:
        return cls(
            provider_id=data.get("provider_id"),
            model=data.get("model") or "",
            temperature=data.get("temperature"),
            max_tokens=data.get("max_tokens"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "provider_id": self.provider_id,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def endpoint(self) -> Endpoint:
        """The endpoint to call (one query for the provider); a deleted provider falls back to the default."""
        provider = Provider.objects.filter(pk=self.provider_id).first() if self.provider_id else None
        return provider.endpoint(self.model) if provider else default_endpoint(self.model)

    def options(
        self, *, json_schema: dict[str, Any] | None = None, word_limit: int | None = None, reject_echo: bool = False
    ) -> ChatOptions:
        return ChatOptions(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            json_schema=json_schema,
            word_limit=word_limit,
            reject_echo=reject_echo,
        )
