"""What a stored reply keeps of how it was written, in its `data`: the embedded model that wrote it
(`embedded_model`) and where the model's token limit cut it (`cut_at_tokens`). A debate's events and a room's
messages store the same keys, so their pages and exports say the same thing of a reply."""

from __future__ import annotations

from collections.abc import Mapping

from chaoslm.llm.gateway import ChatResult, Endpoint


def made_by(endpoint: Endpoint) -> dict[str, str]:
    """The embedded model's name, as the call found it (the settings may name another by the time a page reads it);
    nothing for any other model."""
    return {"embedded_model": endpoint.embedded} if endpoint.embedded else {}


def cut_mark(result: ChatResult) -> dict[str, int]:
    """The tokens a reply had when its token cap (max_tokens, or the server's own limit) stopped it: it ends where
    it was cut, perhaps mid-word. Nothing for a reply that ended of itself."""
    return {"cut_at_tokens": result.completion_tokens} if result.hit_token_limit else {}


def cut_words(tokens: int) -> str:
    """The note an export gives a reply cut at its token limit."""
    return f"cut off at {tokens} tokens, the model's token limit"


def written_by(embedded: Mapping[str, str], *, all_of_it: bool) -> str:
    """What a debate's or a room's page and exports say of the embedded model's part in it, from `embedded` (a
    speaker's name -> the embedded model that wrote their replies): "Written by the embedded SmolLM2-135M model
    (for trying ChaosLM offline)." when it wrote `all_of_it`, else whose replies it wrote; "" when it wrote none."""
    models = list(dict.fromkeys(embedded.values()))
    if len(models) == 1 and all_of_it:
        return f"Written by the embedded {models[0]} model (for trying ChaosLM offline)."
    lines = []
    for model in models:
        names = [name for name, used in embedded.items() if used == model]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        lines.append(f"{listed}: written by the embedded {model} model (for trying ChaosLM offline).")
    return " ".join(lines)
