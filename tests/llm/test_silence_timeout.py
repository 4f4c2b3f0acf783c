"""On the embedded model the timeout measures silence, not the length of a reply (issue 26.1).

The embedded endpoint (`default_endpoint()` with no OPENAI_BASE_URL) pointed at the test server: a busy
machine's model writes a few tokens a second, so a reply takes longer than the timeout to write, yet it is
never silent that long. Every call streams, those nobody reads as they are written (JSON ones) included.
"""

import pytest

from chaoslm.llm import Callbacks, ChatOptions, LLMTimeout, Policy, chat, local_model, pace
from chaoslm.llm.endpoints import default_endpoint
from chaoslm.llm.pace import slow_note

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}, "reasoning": {"type": "string"}},
    "required": ["score", "reasoning"],
}
USER = [{"role": "user", "content": "Hello there"}]
# A one-second timeout, retried once at 1.5 s: for the faults below.
POLICY = Policy(timeout=1.0, max_retries=1, backoff=0.01)
# For the slow replies: a three-second timeout, retried once at 4.5 s, both shorter than those replies take to
# write. Three seconds, as a loaded machine (two cores, three test workers, SmolLM2 beside them) can stall a
# process's threads for a second between two words.
SLOW_POLICY = Policy(timeout=3.0, max_retries=1, backoff=0.01)


@pytest.fixture
def embedded(llm_server, settings, monkeypatch):
    """The embedded model's endpoint, served by the test server at its host and port, its speed not yet measured."""
    monkeypatch.setattr(pace, "_prompt_rates", {})
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_MODEL_HOST = "127.0.0.1"
    settings.CHAOSLM_LOCAL_MODEL_PORT = llm_server.port
    settings.CHAOSLM_LOCAL_SLOTS = 1  # an embedded model of one slot
    endpoint = default_endpoint()
    assert endpoint.base_url == llm_server.url and endpoint.slots == 1
    return endpoint


async def test_a_slow_reply_nobody_watches_outlasts_the_timeout_and_arrives_whole(llm_server, embedded):
    # 36 words at 6 a second: 6 s of writing, never more than ~0.2 s without a word.
    llm_server.configure(reply_words=36, token_rate=6, one_at_a_time=True)
    result = await chat(embedded, USER, policy=SLOW_POLICY)
    assert result.text.startswith("Point ") and len(result.text.split()) == 38
    assert result.attempts == 1 and result.latency_ms >= 5000
    assert len(llm_server.requests) == 1  # no timeout, no retry
    assert llm_server.requests[0].body["stream"] is True


async def test_a_slow_json_reply_is_streamed_assembled_and_validated(llm_server, embedded):
    reason = " ".join(["slow"] * 25)
    llm_server.configure(rules=[{"reply": f'{{"score": 6, "reasoning": "{reason}"}}'}], token_rate=5)
    result = await chat(embedded, USER, ChatOptions(json_schema=SCHEMA), policy=SLOW_POLICY)
    assert result.data == {"score": 6, "reasoning": reason}
    assert result.latency_ms >= 5000 and len(llm_server.requests) == 1
    body = llm_server.requests[0].body
    assert body["stream"] is True and body["response_format"]["type"] == "json_object"
    assert result.completion_tokens == 28 and not result.usage_estimated  # from the stream's usage chunk


async def test_pace_is_reported_while_the_model_writes_and_named_when_slow(llm_server, embedded):
    llm_server.configure(reply_words=30, token_rate=12)
    paces = []
    await chat(embedded, USER, policy=POLICY, callbacks=Callbacks(on_pace=paces.append))
    assert paces and all(5 < pace < 14 for pace in paces)  # ~12 chunks a second, on a busy machine fewer
    assert slow_note(paces[-1]) == f"local model at {round(paces[-1])} tokens/s"
    assert slow_note(120.0) == ""


async def test_a_server_silent_before_its_first_token_times_out_and_is_tried_once_more(llm_server, embedded):
    llm_server.configure(latency=5.0)
    with pytest.raises(LLMTimeout, match=r"wrote nothing for 1s, nor for 1.5s on a second try"):
        await chat(embedded, USER, policy=POLICY)
    assert len(llm_server.requests) == 2


async def test_a_server_silent_half_way_through_a_reply_times_out(llm_server, embedded):
    llm_server.configure(rules=[{"fault": "stall", "times": 1}], reply_words=10, token_rate=20)
    result = await chat(embedded, USER, policy=POLICY)  # stalled once, then the retry streams it all
    assert len(llm_server.requests) == 2 and result.text.startswith("Point ")
    llm_server.configure(rules=[{"fault": "stall"}], reply_words=10, token_rate=20)
    with pytest.raises(LLMTimeout):
        await chat(embedded, USER, ChatOptions(json_schema=SCHEMA), policy=POLICY)


async def test_a_long_prompt_may_take_longer_than_the_timeout_to_read_as_its_measured_speed_says(llm_server, embedded):
    """The model reads the whole prompt before its first token: a prompt eight times as long as one read in
    0.5 s is given the time to be read, though it is longer than the timeout and its retry."""
    llm_server.configure(latency=0.5, reply_words=5)
    await chat(embedded, [{"role": "user", "content": "word " * 200}], policy=POLICY)
    llm_server.configure(latency=3.0, reply_words=5)
    result = await chat(embedded, [{"role": "user", "content": "word " * 1600}], policy=POLICY)
    assert result.attempts == 1 and result.latency_ms >= 3000 and len(llm_server.requests) == 2
    # A short prompt is not: three silent seconds are a fault there, as before.
    with pytest.raises(LLMTimeout):
        await chat(embedded, USER, policy=POLICY)


async def test_the_reading_time_is_allowed_on_top_of_the_timeout_not_in_its_place(llm_server, embedded):
    """A prompt read in 0.5 s is allowed the 2 s timeout plus twice that: its first token after 2.5 s (what every
    request costs beside the reading, stretched on a busy machine) comes on the first try."""
    policy = Policy(timeout=2.0, max_retries=1, backoff=0.01)
    prompt = [{"role": "user", "content": "word " * 200}]
    llm_server.configure(latency=0.5, reply_words=5)
    await chat(embedded, prompt, policy=policy)
    llm_server.configure(latency=2.5, reply_words=5)
    result = await chat(embedded, prompt, policy=policy)
    assert result.attempts == 1 and len(llm_server.requests) == 2  # no timeout, no retry


async def test_the_embedded_models_text_replies_carry_its_stop_sequences_and_json_ones_do_not(embedded, llm_server):
    await chat(embedded, USER, policy=SLOW_POLICY)
    await chat(embedded, USER, ChatOptions(json_schema=SCHEMA), policy=SLOW_POLICY)
    text, scored = llm_server.requests
    assert text.body["stop"] == list(local_model.STOP)
    assert "stop" not in scored.body


async def test_the_embedded_model_writes_no_more_than_its_cap_whatever_the_persona_asks(embedded, llm_server, settings):
    assert embedded.max_tokens == settings.CHAOSLM_LOCAL_MAX_TOKENS == 160
    await chat(embedded, USER, ChatOptions(max_tokens=400), policy=SLOW_POLICY)  # the shipped personas' 400
    await chat(embedded, USER, ChatOptions(max_tokens=30), policy=SLOW_POLICY)
    await chat(embedded, USER, policy=SLOW_POLICY)
    assert [r.body["max_tokens"] for r in llm_server.requests] == [160, 30, 160]
