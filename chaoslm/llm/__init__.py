"""The LLM gateway: one async call API over the official openai client."""

from chaoslm.llm.errors import (
    LLMBadResponse,
    LLMConfigError,
    LLMError,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
)
from chaoslm.llm.gateway import (
    Callbacks,
    ChatOptions,
    ChatResult,
    Endpoint,
    Policy,
    chat,
    estimate_tokens,
    own_connections,
    truncate_words,
)

__all__ = [
    "Callbacks",
    "ChatOptions",
    "ChatResult",
    "Endpoint",
    "LLMBadResponse",
    "LLMConfigError",
    "LLMError",
    "LLMRateLimited",
    "LLMTimeout",
    "LLMUnavailable",
    "Policy",
    "chat",
    "estimate_tokens",
    "own_connections",
    "truncate_words",
]
