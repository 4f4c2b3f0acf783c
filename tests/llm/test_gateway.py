"""The gateway over real HTTP: the openai client against the test server, nothing mocked."""

import asyncio
import logging
import time

import pytest

from chaoslm.llm import (
    Callbacks,
    ChatOptions,
    Endpoint,
    LLMBadResponse,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
    Policy,
    chat,
    own_connections,
)
from chaoslm.llm.gateway import client_for, truncate_words

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}, "reasoning": {"type": "string"}},
    "required": ["score", "reasoning"],
}
USER = [{"role": "user", "content": "Hello there"}]
FAST = Policy(timeout=2.0, max_retries=3, backoff=0.01)


def endpoint(server, json_mode="json_object"):
    return Endpoint(name="test", base_url=server.url, api_key="k", model="test-model", json_mode=json_mode)


async def test_streams_deltas_and_reports_usage(llm_server):
    llm_server.configure(rules=[{"reply": "One two three four five."}], token_rate=200)
    deltas = []
    result = await chat(endpoint(llm_server), USER, policy=FAST, callbacks=Callbacks(on_delta=deltas.append))
    assert result.text == "One two three four five."
    assert len(deltas) == 5
    assert "".join(deltas) == result.text
    assert result.completion_tokens == 5
    assert result.prompt_tokens > 0 and not result.usage_estimated
    assert result.model == "test-model"
    assert result.latency_ms >= 20  # five chunks at 200 a second
    body = llm_server.requests[0].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == USER


async def test_with_no_listener_the_reply_is_asked_for_whole(llm_server):
    """Nobody reads the text as it is written, so it is not streamed: same text, usage and model."""
    llm_server.configure(rules=[{"reply": '{"score": 7, "reasoning": "Clear."}'}], token_rate=200)
    result = await chat(endpoint(llm_server), USER, ChatOptions(json_schema=SCHEMA), policy=FAST)
    assert result.data == {"score": 7, "reasoning": "Clear."}
    assert result.completion_tokens == 4 and result.prompt_tokens > 0 and not result.usage_estimated  # 4 words
    assert result.model == "test-model"
    assert result.latency_ms >= 15  # the server writes it as fast as it would stream it: 4 words at 200 a second
    body = llm_server.requests[0].body
    assert "stream" not in body and "stream_options" not in body
    assert body["response_format"]["type"] == "json_object"


async def test_a_run_keeps_connections_of_its_own_and_closes_them_at_its_end(llm_server):
    llm_server.configure(rules=[{"reply": "Yes."}])
    async with own_connections():
        await chat(endpoint(llm_server), USER, policy=FAST)
        await chat(endpoint(llm_server), USER, policy=FAST)
        run_client = client_for(endpoint(llm_server))
    await chat(endpoint(llm_server), USER, policy=FAST)
    first, second, outside = (r.peer for r in llm_server.requests)
    assert first and first == second  # kept alive between the run's calls
    assert outside != first  # a call outside the run does not use the run's pool
    assert run_client.is_closed()
    assert not client_for(endpoint(llm_server)).is_closed()


@pytest.mark.parametrize(
    ("mode", "expected_format"),
    [
        ("json_schema", {"type": "json_schema", "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False}}),
        ("json_object", {"type": "json_object", "schema": SCHEMA}),
        ("text", None),
    ],
)
async def test_json_in_each_mode(llm_server, mode, expected_format):
    llm_server.configure(rules=[{"reply": 'Sure! ```json\n{"score": 8, "reasoning": "Clear."}\n```'}])
    result = await chat(endpoint(llm_server, mode), USER, ChatOptions(json_schema=SCHEMA), policy=FAST)
    assert result.data == {"score": 8, "reasoning": "Clear."}
    assert llm_server.requests[0].body.get("response_format") == expected_format


async def test_invalid_json_is_retried_up_to_three_times(llm_server):
    llm_server.configure(
        rules=[
            {"reply": "I would give it a seven.", "times": 1},
            {"reply": '{"score": 11, "reasoning": "Too high."}', "times": 1},
            {"reply": '{"score": 6, "reasoning": "Fine."}'},
        ]
    )
    restarts = []
    result = await chat(
        endpoint(llm_server),
        USER,
        ChatOptions(json_schema=SCHEMA),
        policy=FAST,
        callbacks=Callbacks(on_restart=lambda: restarts.append(1)),
    )
    assert result.data == {"score": 6, "reasoning": "Fine."}
    assert result.attempts == 3
    assert len(llm_server.requests) == 3
    assert len(restarts) == 2


async def test_json_that_stays_invalid_raises_bad_response(llm_server):
    llm_server.configure(rules=[{"reply": '{"score": "seven", "reasoning": "x"}'}])
    with pytest.raises(LLMBadResponse) as caught:
        await chat(endpoint(llm_server), USER, ChatOptions(json_schema=SCHEMA), policy=FAST)
    assert "did not give valid JSON in 3 tries" in str(caught.value)
    assert "score" in str(caught.value)
    assert caught.value.last_text == '{"score": "seven", "reasoning": "x"}'
    assert len(llm_server.requests) == 3


async def test_malformed_json_fault_is_retried(llm_server):
    llm_server.configure(rules=[{"fault": "malformed_json", "times": 1}, {"reply": '{"score": 4, "reasoning": "ok"}'}])
    result = await chat(endpoint(llm_server), USER, ChatOptions(json_schema=SCHEMA), policy=FAST)
    assert result.data["score"] == 4
    assert result.attempts == 2


async def test_server_errors_back_off_then_succeed(llm_server):
    llm_server.configure(rules=[{"fault": "500", "times": 2}, {"reply": "Recovered."}])
    waits = []
    result = await chat(
        endpoint(llm_server),
        USER,
        policy=Policy(timeout=2, max_retries=3, backoff=0.05),
        callbacks=Callbacks(on_wait=lambda s, r: waits.append((s, r))),
    )
    assert result.text == "Recovered."
    assert waits == [(0.05, "server error"), (0.1, "server error")]
    assert [r.outcome for r in llm_server.requests] == ["500", "500", "ok"]


async def test_server_errors_that_persist_raise_unavailable(llm_server):
    llm_server.configure(rules=[{"fault": "500"}])
    with pytest.raises(LLMUnavailable) as caught:
        await chat(endpoint(llm_server), USER, policy=Policy(timeout=2, max_retries=2, backoff=0.01))
    assert "answered HTTP 500 after 3 tries" in str(caught.value)
    assert len(llm_server.requests) == 3


async def test_timeout_retries_once_with_one_and_a_half_times_the_timeout(llm_server):
    llm_server.configure(rules=[{"fault": "hang"}])
    started = time.monotonic()
    with pytest.raises(LLMTimeout) as caught:
        await chat(endpoint(llm_server), USER, policy=Policy(timeout=0.4, max_retries=3, backoff=0.01))
    assert len(llm_server.requests) == 2
    # Both tries waited their whole timeout (a lower bound only: a busy machine may fire a timeout late).
    assert time.monotonic() - started >= 0.4 + 0.6
    assert "within 0.4s, nor within 0.6s on a second try" in str(caught.value)


async def test_timeout_then_success_on_the_longer_retry(llm_server):
    llm_server.configure(rules=[{"fault": "hang", "times": 1}, {"reply": "Made it."}])
    result = await chat(endpoint(llm_server), USER, policy=Policy(timeout=0.3, max_retries=3, backoff=0.01))
    assert result.text == "Made it."


async def test_rate_limit_honours_retry_after_and_surfaces_the_wait(llm_server):
    llm_server.configure(rules=[{"fault": "429", "times": 1, "retry_after": 1}, {"reply": "After the wait."}])
    waits = []
    result = await chat(
        endpoint(llm_server), USER, policy=FAST, callbacks=Callbacks(on_wait=lambda s, r: waits.append((s, r)))
    )
    assert result.text == "After the wait."
    assert waits == [(1.0, "rate limited")]
    first, second = llm_server.requests
    assert second.started - first.finished >= 1.0


async def test_rate_limit_is_raised_with_the_wait_when_asked_not_to_wait(llm_server):
    llm_server.configure(rules=[{"fault": "429", "retry_after": 30}])
    with pytest.raises(LLMRateLimited) as caught:
        await chat(endpoint(llm_server), USER, policy=Policy(wait_on_rate_limit=False))
    assert caught.value.retry_after == 30
    assert str(caught.value).endswith("Retry in 30s.")


async def test_dropped_stream_is_retried_and_the_display_told_to_restart(llm_server):
    llm_server.configure(
        rules=[{"fault": "drop", "times": 1, "reply": "alpha beta gamma delta"}, {"reply": "alpha beta gamma delta"}]
    )
    deltas, restarts = [], []
    result = await chat(
        endpoint(llm_server),
        USER,
        policy=FAST,
        callbacks=Callbacks(on_delta=deltas.append, on_restart=lambda: restarts.append(1)),
    )
    assert result.text == "alpha beta gamma delta"
    assert restarts == [1]
    assert "".join(deltas).endswith("alpha beta gamma delta")


async def test_a_whole_reply_cut_off_is_retried_as_a_server_failure(llm_server):
    llm_server.configure(rules=[{"fault": "drop", "times": 1, "reply": "Whole at last."}, {"reply": "Whole at last."}])
    waits = []
    result = await chat(
        endpoint(llm_server), USER, policy=FAST, callbacks=Callbacks(on_wait=lambda s, r: waits.append((s, r)))
    )
    assert result.text == "Whole at last."
    assert waits == [(0.01, "server error")]
    assert [r.outcome for r in llm_server.requests] == ["drop", "ok"]
    assert "stream" not in llm_server.requests[0].body


async def test_a_server_that_keeps_cutting_replies_off_is_unavailable_not_slow(llm_server):
    """A dropped connection is a failure to back off from, with every retry, not a timeout tried once more."""
    llm_server.configure(rules=[{"fault": "drop"}])
    with pytest.raises(LLMUnavailable):
        await chat(endpoint(llm_server), USER, policy=Policy(timeout=2, max_retries=2, backoff=0.01))
    assert len(llm_server.requests) == 3


async def test_a_cancelled_call_is_not_retried_and_its_run_closes_its_connections(llm_server):
    llm_server.configure(rules=[{"fault": "hang"}])
    async with own_connections():
        call = asyncio.create_task(chat(endpoint(llm_server), USER, policy=Policy(timeout=0.3, backoff=0.01)))
        while not llm_server.requests:
            await asyncio.sleep(0.02)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        run_client = client_for(endpoint(llm_server))
    assert run_client.is_closed()
    await asyncio.sleep(0.6)  # past the timeout and its retry: nothing more was sent
    assert len(llm_server.requests) == 1


async def test_calls_go_through_the_proxy_the_environment_names(llm_server, monkeypatch):
    """HTTP_PROXY and NO_PROXY apply, as they did under the client's default transport."""
    llm_server.configure(rules=[{"reply": "Through the proxy."}])
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("HTTP_PROXY", llm_server.url.rsplit("/v1", 1)[0])  # the test server takes proxy requests
    behind = Endpoint(name="proxied", base_url="http://llm.invalid/v1", api_key="k", model="test-model")
    async with own_connections():
        assert (await chat(behind, USER, policy=FAST)).text == "Through the proxy."
    monkeypatch.setenv("NO_PROXY", "llm.invalid")
    async with own_connections():
        with pytest.raises(LLMUnavailable):
            await chat(behind, USER, policy=Policy(timeout=2, max_retries=0, backoff=0.01))


async def test_unreachable_endpoint_is_unavailable():
    dead = Endpoint(name="nowhere", base_url="http://127.0.0.1:9/v1", api_key="k", model="m")
    with pytest.raises(LLMUnavailable) as caught:
        await chat(dead, USER, policy=Policy(timeout=1, max_retries=1, backoff=0.01))
    assert "could not be reached" in str(caught.value)
    assert "http://127.0.0.1:9/v1" in str(caught.value)


async def test_word_limit_truncates_and_logs_the_warning(llm_server, caplog):
    reply = " ".join(f"w{i}" for i in range(752))
    llm_server.configure(rules=[{"reply": reply}])
    with caplog.at_level(logging.WARNING, logger="chaoslm.llm"):
        result = await chat(endpoint(llm_server), USER, ChatOptions(word_limit=500), policy=FAST)
    assert result.text == " ".join(f"w{i}" for i in range(500))
    assert result.words_before_truncation == 752
    message = "Response exceeded word limit of 500, truncated from 752 to 500 words"
    assert result.warnings == [message]
    assert message in caplog.text


async def test_a_reply_cut_off_at_the_token_limit_says_so_whole_or_streamed(llm_server):
    llm_server.configure(rules=[{"reply": "The air in our cit", "finish_reason": "length"}])
    options = ChatOptions(max_tokens=5)
    whole = await chat(endpoint(llm_server), USER, options, policy=FAST)
    streamed = await chat(endpoint(llm_server), USER, options, policy=FAST, callbacks=Callbacks(on_delta=[].append))
    assert (whole.text, whole.hit_token_limit) == ("The air in our cit", True)
    assert (streamed.text, streamed.hit_token_limit) == ("The air in our cit", True)
    assert [r.body["max_tokens"] for r in llm_server.requests] == [5, 5]
    assert [r.body.get("stream", False) for r in llm_server.requests] == [False, True]
    llm_server.configure(rules=[{"reply": "Done."}])
    assert not (await chat(endpoint(llm_server), USER, options, policy=FAST)).hit_token_limit


def test_truncate_words_keeps_the_texts_own_spacing():
    assert truncate_words("One  two\n\nthree four", 3) == ("One  two\n\nthree", 4)
    assert truncate_words("short", 3) == ("short", 1)
