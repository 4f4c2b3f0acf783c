"""Prices and what calls cost: genai-prices by the model's name, the admin's override, the embedded model free,
unknown otherwise; a streamed call priced from the usage the server reported in its last chunk."""

from decimal import Decimal

import pytest

from chaoslm import costs
from chaoslm.llm import Callbacks, Endpoint, Policy, chat, prices

SYSTEM_AND_USER = [
    {"role": "system", "content": "You are a careful debater who argues from evidence. " * 8},
    {"role": "user", "content": "Open the debate."},
]
PRICE = prices.Price(Decimal("2.5"), Decimal("10"), Decimal("1.25"), "set for test")


def test_the_library_prices_known_models_by_name_and_leaves_the_rest_unknown():
    mini = prices.library_price("https://api.openai.com/v1", "gpt-4o-mini")
    assert (mini.input, mini.output, mini.cached_input) == (Decimal("0.15"), Decimal("0.6"), Decimal("0.075"))
    # The model that answered is a dated snapshot: the same price.
    assert prices.library_price("https://api.openai.com/v1", "gpt-4o-2024-08-06").input == Decimal("2.5")
    assert prices.library_price("https://api.openai.com/v1", "no-such-model-here") is None
    # A server on this machine or a private network is never priced by a guess from the model's name.
    for url in (
        "http://localhost:11434/v1",
        "http://127.0.0.1:8080/v1",
        "http://192.168.1.9/v1",
        "http://ollama:11434",
    ):
        assert prices.library_price(url, "gpt-4o-mini") is None
    # The admin's price wins over the library's.
    assert prices.price_of("https://api.openai.com/v1", "gpt-4o-mini", PRICE) is PRICE


def test_a_calls_cost_counts_cached_input_at_its_rate_in_exact_decimals():
    # 1,000 prompt tokens of which 400 cached, 200 written: 600 x 2.5 + 400 x 1.25 + 200 x 10, per million.
    assert PRICE.cost(1000, 200, 400) == Decimal("0.0040000000")
    # With no cached rate, cached tokens cost as input.
    assert prices.Price(Decimal(1), Decimal(2)).cost(1000, 0, 400) == Decimal("0.0010000000")
    assert prices.FREE.cost(10_000, 10_000) == 0


def test_totals_say_unknown_rather_than_a_made_up_zero():
    assert costs.Total(Decimal("0.42"), 0, 3).text() == "$0.42"
    assert costs.Total(Decimal("0.42"), 2, 5).text() == "$0.42 + unknown"
    assert costs.Total(Decimal(0), 4, 4).text() == "unknown price"
    assert costs.Total().text() == "$0"
    assert costs.Total(Decimal("0.0042"), 0, 1).text() == "$0.0042"
    assert (costs.Total(Decimal("1"), 1, 2) + costs.Total(Decimal("2.5"), 0, 1)).text() == "$3.50 + unknown"


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_call_is_priced_from_the_usage_the_server_reported(llm_server, streamed):
    llm_server.configure(rules=[{"reply": "One two three four five."}], prompt_cache=True)
    endpoint = Endpoint(name="paid", base_url=llm_server.url, api_key="k", model="test-model", price=PRICE)
    callbacks = Callbacks(on_delta=lambda _: None) if streamed else Callbacks()
    result = await chat(endpoint, SYSTEM_AND_USER, policy=Policy(timeout=2.0), callbacks=callbacks)
    recorded = llm_server.requests[0]
    assert ("stream_options" in recorded.body) is streamed
    usage = recorded.usage
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0
    assert (result.prompt_tokens, result.completion_tokens, result.cached_tokens) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
        cached,
    )
    expected = ((usage["prompt_tokens"] - cached) * Decimal("2.5") + cached * Decimal("1.25") + 5 * Decimal(10)) / (
        Decimal(1_000_000)
    )
    assert result.cost == expected


async def test_a_call_at_an_unknown_price_has_no_cost_and_the_embedded_model_is_free(llm_server):
    unknown = Endpoint(name="local", base_url=llm_server.url, api_key="", model="test-model")
    assert (await chat(unknown, SYSTEM_AND_USER, policy=Policy(timeout=2.0))).cost is None
    local = Endpoint(name="local", base_url=llm_server.url, api_key="", model="test-model", price=prices.FREE)
    assert (await chat(local, SYSTEM_AND_USER, policy=Policy(timeout=2.0))).cost == 0
