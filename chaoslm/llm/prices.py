"""What a model call costs: prices per million tokens, from the admin's override or the genai-prices library.

Pure (no Django): the gateway prices every call here as it finishes (`cost_of`), from the endpoint it called, so
a stored call carries its cost and nothing is looked up again to add it. Money is `Decimal`, in US dollars.

A price is known three ways: an admin's override on the provider (`Endpoint.price`), the embedded model (free:
it runs here), or genai-prices by the provider's address and the model's name. Anything else is unknown, and
a call at an unknown price has an unknown cost (None), never a made-up 0.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from urllib.parse import urlsplit

logger = logging.getLogger("chaoslm.llm")

MILLION = Decimal(1_000_000)
# A cost is kept to this many places of a dollar (a millionth of a cent): a cheap model's call costs a few
# millionths of a dollar, and a sum of thousands of them must not drift.
PLACES = Decimal("0.0000000001")


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens: input, output, and cached input (None: as input, where the provider has no
    cheaper rate for a prompt prefix it has seen). `source` says where the price came from, for people."""

    input: Decimal
    output: Decimal
    cached_input: Decimal | None = None
    source: str = ""

    def cost(self, tokens_in: int, tokens_out: int, tokens_cached: int = 0) -> Decimal:
        """The cost of one call's usage: `tokens_in` counts its cached tokens (as OpenAI reports them)."""
        cached = min(max(tokens_cached, 0), tokens_in)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        total = (tokens_in - cached) * self.input + cached * cached_rate + tokens_out * self.output
        return (total / MILLION).quantize(PLACES)

    def text(self) -> str:
        cached = f", cached input ${self.cached_input:g}" if self.cached_input is not None else ""
        return f"${self.input:g} in, ${self.output:g} out{cached} per million tokens"


FREE = Price(Decimal(0), Decimal(0), None, "the embedded model runs here: free")


def _local(base_url: str) -> bool:
    """Whether the endpoint is on this machine or a private network (Ollama, vLLM, llama.cpp at home): no price
    library knows what it costs, and asking would only guess from the model's name."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost" or host.endswith(".local") or "." not in host:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_loopback or address.is_link_local


@functools.lru_cache(maxsize=512)
def library_price(base_url: str, model: str) -> Price | None:
    """genai-prices' price of `model` at the provider whose API is at `base_url`, None if it knows none.

    Cached a process: the library's first use loads its price table (about a second; `warm_up` pays it before
    a server serves), later ones cost a dictionary lookup."""
    if not model or _local(base_url):
        return None
    from genai_prices import data_snapshot

    try:
        provider, info = data_snapshot.get_snapshot().find_provider_model(model, None, None, base_url.rstrip("/"))
    except LookupError:
        return None
    prices = info.get_prices(datetime.now(tz=UTC))
    rates = prices.input_mtok, prices.output_mtok, prices.cache_read_mtok
    # Tiered prices (by prompt length) are not one rate a token: the library's base tier is what it says a call
    # under the first threshold costs, and most calls are.
    rates = tuple(getattr(rate, "base", rate) for rate in rates)
    if not all(isinstance(rate, Decimal) for rate in rates[:2]):
        return None
    cached = rates[2] if isinstance(rates[2], Decimal) else None
    return Price(rates[0], rates[1], cached, f"genai-prices: {provider.name} {info.id}")


def price_of(base_url: str, model: str, override: Price | None) -> Price | None:
    """The price of calls to `model` at `base_url`: the override if there is one, else the library's."""
    return override if override is not None else library_price(base_url, model)


def cost_of(
    base_url: str, model: str, override: Price | None, tokens_in: int, tokens_out: int, cached: int
) -> Decimal | None:
    """One call's cost, None if its price is unknown."""
    price = price_of(base_url, model, override)
    return None if price is None else price.cost(tokens_in, tokens_out, cached)


def warm_up() -> None:
    """Load the library's price table now rather than at a server's first priced call."""
    from genai_prices import data_snapshot

    data_snapshot.get_snapshot()
