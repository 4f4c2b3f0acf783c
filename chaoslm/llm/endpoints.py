"""The default endpoint: where a call goes when no provider is named (a persona with none, the health probe,
`manage.py llm_check`). It reads only the settings and the embedded model's choice, so it lives in the core."""

from __future__ import annotations

from django.conf import settings

from chaoslm.llm import local_model, prices
from chaoslm.llm.gateway import Endpoint


def default_endpoint(model: str = "") -> Endpoint:
    """The endpoint for personas with no provider: OPENAI_BASE_URL/OPENAI_API_KEY, else the local model."""
    if not local_model.in_use():
        return Endpoint(
            name="default",
            base_url=settings.OPENAI_BASE_URL or "https://api.openai.com/v1",
            api_key=settings.OPENAI_API_KEY,
            model=model or settings.CHAOSLM_DEFAULT_MODEL,
            context_window=128_000,
            json_mode="json_schema" if not settings.OPENAI_BASE_URL else "json_object",
        )
    model = local_model.chosen()
    return Endpoint(
        name=f"local {model.label}",
        base_url=local_model.base_url(),
        api_key="",
        model=model.alias,
        context_window=settings.CHAOSLM_LOCAL_MODEL_CONTEXT,
        json_mode="json_object",
        slots=model.slots,
        stop=local_model.STOP if model.shipped else (),
        max_tokens=settings.CHAOSLM_LOCAL_MAX_TOKENS or None,
        streams=True,
        price=prices.FREE,
        embedded=model.label,
    )
