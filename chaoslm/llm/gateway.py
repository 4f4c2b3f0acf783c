"""The one call API every format and every room uses to talk to a model.

`chat()` sends a conversation to an OpenAI-compatible endpoint through the official `openai`
client, streams the reply through `on_delta` (or, with no `on_delta`, asks for it whole, except from
an endpoint that `streams` every reply), and returns a `ChatResult`. It owns the retry policy (1.5x
timeout retry, backoff on 5xx, Retry-After on 429), JSON replies (three modes, validated, three
attempts), the word limit, and usage accounting.
Callers only ever see the typed errors of `chaoslm.llm.errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import logging
import re
import ssl
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from chaoslm.llm import echo, local_status, pace, prices, slots
from chaoslm.llm.errors import (
    LLMBadResponse,
    LLMConfigError,
    LLMError,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
)
from chaoslm.llm.pace import PaceMeter

# The openai client, httpx, aiohttp (chaoslm/llm/transport.py) and jsonschema cost about a second of imports,
# most of what a command took to start: every command loads this module (the models name an Endpoint), few
# call a model. The functions that need them import them, once, at a process's first call.
if TYPE_CHECKING:
    import jsonschema
    import openai

logger = logging.getLogger("chaoslm.llm")

# How many 1s waits a call spends on an embedded model its supervisor is restarting (the supervisor's
# own retries are bounded too: it ends "up" or "down" well before this).
_LOCAL_RESTART_WAITS = 300

JsonMode = Literal["json_schema", "json_object", "text"]
Message = dict[str, str]


@dataclass(frozen=True)
class Endpoint:
    """A resolved OpenAI-compatible endpoint and the model to ask there."""

    name: str
    base_url: str
    api_key: str
    model: str
    context_window: int = 8192
    json_mode: JsonMode = "json_object"
    # A server that answers this many requests at a time (the embedded model: 1): calls wait for a slot in
    # chaoslm/llm/slots.py, before their timeout starts. 0: no line, the server copes with any number.
    slots: int = 0
    # Ask for every reply as a stream, even one nobody reads as it is written: the timeout is then the longest
    # silence (before the first token, between two), not the time to write the whole reply. The embedded
    # model on a busy machine writes a few tokens a second: a reply asked for whole outlasted the timeout.
    streams: bool = False
    # Sent as the `stop` of every text reply: where a small model would go on writing the next speaker's turn.
    stop: tuple[str, ...] = ()
    # The most tokens a reply may have here, whatever the persona asks (the embedded model: a first debate sized
    # for a small model on this machine's CPU); None: the persona's own.
    max_tokens: int | None = None
    # The admin's price for this provider's calls (or the embedded model's: free); None: genai-prices' by the
    # model's name, or unknown (chaoslm/llm/prices.py).
    price: prices.Price | None = None
    # The embedded model as people read it (SmolLM2-135M, or the GGUF CHAOSLM_LOCAL_MODEL names); "" for any other
    # endpoint. A debate's calls to it record it, and the debate's pages and exports name it from that.
    embedded: str = ""


@dataclass(frozen=True)
class Policy:
    """How hard the gateway tries before it gives up; the defaults come from settings."""

    timeout: float = 60.0
    max_retries: int = 3
    backoff: float = 0.5
    max_retry_after: float = 120.0
    wait_on_rate_limit: bool = True
    json_attempts: int = 3

    @classmethod
    def from_settings(cls, **overrides: Any) -> Policy:
        # Imported here, not above: the gateway (and chaoslm/llm/messages.py, which the pure formats use) loads
        # without Django; only callers inside the web app or a worker read settings.
        from django.conf import settings

        values: dict[str, Any] = {
            "timeout": settings.CHAOSLM_LLM_TIMEOUT,
            "max_retries": settings.CHAOSLM_LLM_MAX_RETRIES,
            "backoff": settings.CHAOSLM_LLM_BACKOFF,
            "max_retry_after": settings.CHAOSLM_LLM_MAX_RETRY_AFTER,
        }
        values.update(overrides)
        return cls(**values)


@dataclass(frozen=True)
class ChatOptions:
    temperature: float | None = None
    max_tokens: int | None = None
    json_schema: dict[str, Any] | None = None
    word_limit: int | None = None
    # A judge's reply that only gives its prompt back (its example sentence as the reasoning) or loops is invalid,
    # and asked again as invalid JSON is (chaoslm/llm/echo.py).
    reject_echo: bool = False


@dataclass
class ChatResult:
    text: str
    data: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Of `prompt_tokens`, those the provider read from its prompt cache (usage.prompt_tokens_details).
    cached_tokens: int = 0
    # What the call cost in dollars at its endpoint's price; None when the price is unknown (never a made-up 0).
    cost: Decimal | None = None
    latency_ms: int = 0
    model: str = ""
    attempts: int = 1
    words_before_truncation: int | None = None
    # The model stopped because it reached its token cap (finish_reason "length": max_tokens, or the server's own
    # limit), so the reply ends where it was cut, perhaps mid-word.
    hit_token_limit: bool = False
    usage_estimated: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class Callbacks:
    """Hooks for live display. All are plain functions: they must not block."""

    on_delta: Callable[[str], None] | None = None
    # The text streamed so far is discarded (a retry begins); a display should clear it.
    on_restart: Callable[[], None] | None = None
    # The gateway is about to wait `seconds` before trying again, for `reason`.
    on_wait: Callable[[float, str], None] | None = None
    # The call waits for a slot of the endpoint (Endpoint.slots), this many calls ahead; 0 once it has one.
    on_queued: Callable[[int], None] | None = None
    # From an endpoint that `streams`: how fast the model is writing this reply, in tokens a second, now and then.
    on_pace: Callable[[float], None] | None = None


NO_CALLBACKS = Callbacks()

# One AsyncOpenAI client per event loop and endpoint: connection pools are bound to the loop they were made in.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], openai.AsyncOpenAI]] = (
    weakref.WeakKeyDictionary()
)
# The clients of the innermost `own_connections()` block, if the caller is inside one.
_scoped_clients: contextvars.ContextVar[dict[tuple[str, str], openai.AsyncOpenAI] | None] = contextvars.ContextVar(
    "chaoslm_scoped_clients", default=None
)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle costs ~20 ms; every client (one per event loop) shares one context.
    import httpx2 as httpx

    return httpx.create_ssl_context()


def warm_up() -> None:
    """Pay the one-time costs (the client's imports, the CA bundle) before serving, not on the first call."""
    import openai  # noqa: F401

    from chaoslm.llm import transport  # noqa: F401

    _ssl_context()
    prices.warm_up()


@contextlib.asynccontextmanager
async def own_connections() -> AsyncIterator[None]:
    """Give the calls made inside this block, and in tasks it starts, a connection pool of their own.

    A debate run or a room's auto loop holds a few connections of its own, reused for its calls, closed
    at its end: a run that ends (or is cancelled) leaves nothing open, and no run waits on another's pool.
    """
    clients: dict[tuple[str, str], openai.AsyncOpenAI] = {}
    token = _scoped_clients.set(clients)
    try:
        yield
    finally:
        _scoped_clients.reset(token)
        for client in clients.values():
            await client.close()


def _new_client(endpoint: Endpoint) -> openai.AsyncOpenAI:
    import openai

    from chaoslm.llm.transport import AiohttpTransport

    return openai.AsyncOpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key or "not-needed",
        max_retries=0,  # the retry policy is ours, below
        # aiohttp under the client's httpx interface: a fraction of the CPU of the default transport
        # (chaoslm/llm/transport.py). The environment's proxies are the transport's: the client mounts none.
        http_client=openai.DefaultAsyncHttpxClient(
            transport=AiohttpTransport(_ssl_context(), max_connections=2000), trust_env=False
        ),
    )


def client_for(endpoint: Endpoint) -> openai.AsyncOpenAI:
    key = (endpoint.base_url, endpoint.api_key)
    scoped = _scoped_clients.get()
    clients = scoped if scoped is not None else _clients.setdefault(asyncio.get_running_loop(), {})
    client = clients.get(key)
    if client is None:
        client = clients[key] = _new_client(endpoint)
    return client


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A cheap upper-leaning estimate (about four characters a token) for checks before sending."""
    return 3 + sum(4 + len(m.get("content", "")) // 4 for m in messages)


_WORD = re.compile(r"\S+")


def truncate_words(text: str, limit: int) -> tuple[str, int]:
    """Cut `text` after its `limit`-th word, keeping its own spacing; return it and the original count."""
    words = list(_WORD.finditer(text))
    if len(words) <= limit:
        return text, len(words)
    return text[: words[limit - 1].end()], len(words)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """Parse a JSON value from a reply that may wrap it in prose or a code fence."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    fenced = _FENCE.search(stripped)
    if fenced:
        try:
            return json.loads(fenced.group(1))
        except json.JSONDecodeError:
            pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except json.JSONDecodeError:
            continue
        return value
    raise ValueError("the reply contains no JSON object")


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    # Built once per schema: `jsonschema.validate` would check the schema itself on every call.
    import jsonschema

    schema = json.loads(schema_json)
    return jsonschema.validators.validator_for(schema)(schema)


def _validate(value: Any, schema: dict[str, Any]) -> None:
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator(json.dumps(schema, sort_keys=True)).iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the reply"
        raise ValueError(f"{where}: {error.message}")


def _response_format(endpoint: Endpoint, schema: dict[str, Any]) -> dict[str, Any] | None:
    if endpoint.json_mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": False}}
    if endpoint.json_mode == "json_object":
        # `schema` is llama.cpp's extension: its server turns it into a grammar; others ignore it.
        return {"type": "json_object", "schema": schema}
    return None


def _retry_after(error: openai.APIStatusError) -> float:
    raw = error.response.headers.get("retry-after", "")
    try:
        return max(0.0, float(raw))
    except ValueError:
        return 1.0


@dataclass
class _Attempt:
    text: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int = 0
    finish_reason: str = ""


def _cached(usage: dict[str, Any] | None) -> int:
    """The prompt tokens read from the provider's cache, where it says (OpenAI's usage.prompt_tokens_details)."""
    details = (usage or {}).get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) and cached > 0 else 0


async def _ask_once(
    endpoint: Endpoint,
    messages: Sequence[Message],
    options: ChatOptions,
    timeout: float,
    callbacks: Callbacks,
) -> _Attempt:
    """One request: streamed through `callbacks.on_delta` if there is one, or from an endpoint that `streams`;
    else the whole reply at once.

    Nobody reads a stream without a listener, and reading one costs several times the CPU of one reply
    (a parse per chunk through the HTTP stack and the SSE decoder): ~3.5 against ~1.5 ms a call here. The
    timeout (`timeout` is the transport's read timeout) is the longest wait for the next bytes either way.
    """
    body: dict[str, Any] = {"model": endpoint.model, "messages": list(messages)}
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.max_tokens is not None or endpoint.max_tokens is not None:
        asked = [n for n in (options.max_tokens, endpoint.max_tokens) if n is not None]
        body["max_tokens"] = min(asked)
    if options.json_schema is not None:
        response_format = _response_format(endpoint, options.json_schema)
        if response_format is not None:
            body["response_format"] = response_format
    elif endpoint.stop:
        body["stop"] = list(endpoint.stop)
    # The client's own `post`, not `chat.completions.create`: the typed method spends several
    # milliseconds a call transforming the request's TypedDicts and building a pydantic model for
    # every chunk. `post` keeps the client's transport, headers and error mapping, and with
    # `cast_to=object` gives the plain dicts the server sent.
    client = client_for(endpoint)
    if callbacks.on_delta is None and not endpoint.streams:
        return await _ask_whole(client, endpoint, body, timeout)
    return await _ask_streamed(client, endpoint, body, timeout, callbacks)


async def _ask_whole(client: openai.AsyncOpenAI, endpoint: Endpoint, body: dict[str, Any], timeout: float) -> _Attempt:
    reply: dict[str, Any] = await client.post(  # type: ignore[assignment]
        "/chat/completions", body=body, cast_to=object, options={"timeout": timeout}
    )
    choices = reply.get("choices") or ()
    if not choices:
        raise _DroppedStream()
    usage = reply.get("usage") or {}
    return _Attempt(
        (choices[0].get("message") or {}).get("content") or "",
        reply.get("model") or endpoint.model,
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        _cached(usage),
        choices[0].get("finish_reason") or "",
    )


async def _ask_streamed(
    client: openai.AsyncOpenAI,
    endpoint: Endpoint,
    body: dict[str, Any],
    timeout: float,
    callbacks: Callbacks,
) -> _Attempt:
    """The reply as a stream. From an endpoint that `streams`, the wait for the first token may be longer than
    `timeout` (`pace.first_token_allowance`: the model reads the prompt first); then `timeout` is the longest
    silence between two chunks."""
    import openai

    first_wait = timeout
    if endpoint.streams:
        first_wait = pace.first_token_allowance(endpoint.base_url, estimate_tokens(body["messages"]), timeout)
    loop = asyncio.get_running_loop()
    sent = loop.time()
    stream = await client.post(
        "/chat/completions",
        body={**body, "stream": True, "stream_options": {"include_usage": True}},
        cast_to=object,
        stream=True,
        stream_cls=openai.AsyncStream[object],
        options={"timeout": first_wait},
    )
    parts: list[str] = []
    model = endpoint.model
    usage: dict[str, Any] | None = None
    finished = ""
    first_token: float | None = None
    on_pace = callbacks.on_pace if endpoint.streams else None
    meter = PaceMeter()
    chunk: dict[str, Any]
    try:
        # The transport's read timeout is `first_wait`; past the first chunk, this one is `timeout`.
        async with asyncio.timeout(None) as silence:
            async for chunk in stream:  # type: ignore[assignment]
                if first_wait > timeout:
                    silence.reschedule(loop.time() + timeout)
                model = chunk.get("model") or model
                usage = chunk.get("usage") or usage
                for choice in chunk.get("choices") or ():
                    delta = (choice.get("delta") or {}).get("content")
                    if delta:
                        if first_token is None:
                            first_token = loop.time()
                            _first_token.set(first_token - sent)
                        parts.append(delta)
                        if callbacks.on_delta is not None:
                            callbacks.on_delta(delta)
                        if on_pace is not None and (rate := meter.chunk()) is not None:
                            on_pace(rate)
                    if choice.get("finish_reason"):
                        finished = choice["finish_reason"]
    except BaseException:
        # Closed, not left to the pool: llama.cpp stops writing a stream whose reader has gone.
        await stream.close()
        raise
    if not finished:
        raise _DroppedStream()
    prompt_tokens = usage.get("prompt_tokens") if usage else None
    if endpoint.streams and first_token is not None:
        pace.record_prompt(endpoint.base_url, prompt_tokens or estimate_tokens(body["messages"]), first_token - sent)
    return _Attempt(
        "".join(parts),
        model,
        prompt_tokens,
        usage.get("completion_tokens") if usage else None,
        _cached(usage),
        finished,
    )


class _DroppedStream(Exception):
    pass


async def _sleep(seconds: float, reason: str, callbacks: Callbacks) -> None:
    if callbacks.on_wait is not None:
        callbacks.on_wait(seconds, reason)
    await asyncio.sleep(seconds)


class _Retries:
    """What the retry policy has used up across one call's attempts, and the error when it runs out."""

    def __init__(self, endpoint: Endpoint, policy: Policy, callbacks: Callbacks) -> None:
        self.endpoint = endpoint
        self.policy = policy
        self.callbacks = callbacks
        self.where = f"{endpoint.name} ({endpoint.model})"
        self.timeout = policy.timeout
        self.timed_out = False
        self.failures = 0
        self.rate_limits = 0
        self.restart_waits = 0
        self.streamed = False
        self.tracked = Callbacks(
            on_delta=self.track if callbacks.on_delta is not None else None,
            on_restart=callbacks.on_restart,
            on_wait=callbacks.on_wait,
            on_pace=callbacks.on_pace,
        )

    def track(self, delta: str) -> None:
        self.streamed = True
        if self.callbacks.on_delta is not None:
            self.callbacks.on_delta(delta)

    def restart(self) -> None:
        if self.streamed and self.callbacks.on_restart is not None:
            self.callbacks.on_restart()

    def after_timeout(self) -> None:
        """One retry at 1.5x the timeout, then LLMTimeout."""
        self.restart()
        if self.timed_out:
            # A streamed reply's timeout is a silence: a slow model that keeps writing never reaches it.
            silent = (
                "wrote nothing for {:g}s, nor for {:g}s"
                if self.endpoint.streams
                else "did not answer within {:g}s, nor within {:g}s"
            )
            raise LLMTimeout(
                f"{self.where} {silent.format(self.policy.timeout, self.timeout)} on a second try. Check that the "
                "server is up and not overloaded, or raise CHAOSLM_LLM_TIMEOUT."
            ) from None
        self.timed_out = True
        self.timeout = self.policy.timeout * 1.5
        logger.warning("%s timed out; retrying once with a %.1fs timeout", self.where, self.timeout)

    def rate_limit_wait(self, error: openai.RateLimitError) -> float:
        """The Retry-After to sit out, or LLMRateLimited when the caller will not wait that long."""
        self.restart()
        wait = _retry_after(error)
        self.rate_limits += 1
        policy = self.policy
        if not policy.wait_on_rate_limit or wait > policy.max_retry_after or self.rate_limits > policy.max_retries:
            raise LLMRateLimited(f"{self.where} is rate limited. Retry in {wait:.0f}s.", retry_after=wait) from None
        return wait

    def local_model_wait(self) -> float | None:
        """When the embedded model is being restarted by `serve`: the pause before trying again (None when the
        endpoint is not the embedded model, or it is fine). LLMUnavailable, with the supervisor's words, when
        it is down or its restart outlasts our patience."""
        trouble = local_status.trouble_at(self.endpoint.base_url)
        if trouble is None:
            return None
        self.restart()
        if not trouble.restarting or self.restart_waits >= _LOCAL_RESTART_WAITS:
            raise LLMUnavailable(trouble.message) from None
        self.restart_waits += 1
        return 1.0

    def failure_backoff(self, error: Exception) -> float:
        """The backoff before the next try after a server failure, or LLMUnavailable when the tries are used up."""
        self.restart()
        self.failures += 1
        if self.failures > self.policy.max_retries:
            import openai

            if isinstance(error, openai.InternalServerError):
                detail = f"answered HTTP {error.status_code}"
            elif isinstance(error, _DroppedStream):
                detail = "kept closing the reply before it was complete"
            else:
                detail = "could not be reached"
            raise LLMUnavailable(
                f"{self.where} {detail} after {self.failures} tries. "
                f"Check that the server at {self.endpoint.base_url} is running."
            ) from None
        return self.policy.backoff * 2 ** (self.failures - 1)


def _refusal(where: str, error: openai.APIStatusError) -> LLMError:
    """The error for a request the server refused outright: retrying will not help."""
    import openai

    if isinstance(error, openai.AuthenticationError):
        return LLMConfigError(f"{where} refused the API key. Check the key in the provider's API key variable.")
    if isinstance(error, openai.NotFoundError):
        return LLMConfigError(
            f"{where} does not know this model or path. Check the provider's base URL and the model name."
        )
    if error.status_code >= 500:
        return LLMUnavailable(f"{where} answered HTTP {error.status_code}.")
    return LLMConfigError(f"{where} refused the request (HTTP {error.status_code}): {error.message}")


async def _call_with_retries(
    endpoint: Endpoint,
    messages: Sequence[Message],
    options: ChatOptions,
    policy: Policy,
    callbacks: Callbacks,
) -> _Attempt:
    import httpx2 as httpx
    import openai

    retries = _Retries(endpoint, policy, callbacks)
    while True:
        try:
            async with slots.slot(endpoint.base_url, endpoint.slots, callbacks.on_queued):
                return await _ask_once(endpoint, messages, options, retries.timeout, retries.tracked)
        except (openai.APITimeoutError, httpx.TimeoutException, TimeoutError):
            retries.after_timeout()
        except openai.RateLimitError as error:
            await _sleep(retries.rate_limit_wait(error), "rate limited", callbacks)
        except (openai.APIConnectionError, httpx.TransportError, _DroppedStream, openai.InternalServerError) as error:
            restart_wait = retries.local_model_wait()
            if restart_wait is not None:
                await _sleep(restart_wait, "the embedded model is restarting", callbacks)
                continue
            await _sleep(retries.failure_backoff(error), "server error", callbacks)
        except openai.APIStatusError as error:
            raise _refusal(retries.where, error) from None


def price_call(endpoint: Endpoint, result: ChatResult) -> Decimal | None:
    """The call's cost at the price of the model that answered (the one asked, if the library knows only that)."""
    usage = (result.prompt_tokens, result.completion_tokens, result.cached_tokens)
    cost = prices.cost_of(endpoint.base_url, result.model or endpoint.model, endpoint.price, *usage)
    if cost is None and result.model and result.model != endpoint.model:
        cost = prices.cost_of(endpoint.base_url, endpoint.model, endpoint.price, *usage)
    return cost


async def chat(
    endpoint: Endpoint,
    messages: Sequence[Message],
    options: ChatOptions | None = None,
    *,
    policy: Policy | None = None,
    callbacks: Callbacks = NO_CALLBACKS,
) -> ChatResult:
    """Send `messages`; stream deltas to `callbacks.on_delta` if given; return the finished, validated result."""
    if _scoped_clients.get() is None:
        # A call outside a run (a management command): connections of its own, closed when it ends. An
        # aiohttp pool still open when its event loop ends warns "Unclosed client session".
        async with own_connections():
            return await chat(endpoint, messages, options, policy=policy, callbacks=callbacks)
    from chaoslm import metrics, tracing

    options = options or ChatOptions()
    started = time.perf_counter()
    reset = _first_token.set(None)
    span = tracing.model_call_span(endpoint, options) if tracing.enabled() else None
    try:
        result = await _chat(endpoint, messages, options, policy, callbacks)
    except BaseException as error:
        metrics.record_call(
            endpoint.name, endpoint.model, metrics.outcome_of(error), time.perf_counter() - started, _first_token.get()
        )
        if span is not None:
            tracing.end_model_call(span, error=error)
        _first_token.reset(reset)
        raise
    # The usage the provider reported: an estimate is not counted as tokens.
    reported = not result.usage_estimated
    metrics.record_call(
        endpoint.name,
        endpoint.model,
        "ok",
        time.perf_counter() - started,
        _first_token.get(),
        result.prompt_tokens if reported else 0,
        result.completion_tokens if reported else 0,
        result.cached_tokens if reported else 0,
        result.cost,
    )
    _first_token.reset(reset)
    if span is not None:
        tracing.end_model_call(span, result=result)
    return result


class EchoedPrompt(ValueError):
    """The reply, or a sentence of its JSON, is its prompt given back or one phrase looped."""


_SENTENCES = frozenset({"reasoning", "reason", "explanation", "announcement", "text"})


def _reject_echo(messages: Sequence[Message], text: str, data: Any) -> None:
    """Raise EchoedPrompt where the reply is not the model's own words: with JSON, any of its sentences (a
    reasoning, an announcement; `_SENTENCES`); else the whole text, which may not be empty either."""
    prompt = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    if data is None:
        pieces = [text]
    else:  # its sentences, not its choices: a team's name copied from the prompt's list is an answer
        fields = data.items() if isinstance(data, dict) else ()
        pieces = [v for k, v in fields if k in _SENTENCES and isinstance(v, str)]
    for piece in pieces:
        # A JSON sentence may be empty (a reasoning left out); a reply of text may not.
        if echo.is_invalid(prompt, piece) if data is None else echo.is_loop(piece) or echo.echoes(prompt, piece):
            shown = " ".join(piece.split())
            raise EchoedPrompt(
                f"the reply gives its prompt back or loops instead of answering: {shown[:80]!r}"
                if shown
                else "the reply is empty"
            )


# Seconds from sending a streamed call's request to its first token, for the metrics (None: none yet, or whole).
_first_token: contextvars.ContextVar[float | None] = contextvars.ContextVar("chaoslm_first_token", default=None)


async def _chat(
    endpoint: Endpoint,
    messages: Sequence[Message],
    options: ChatOptions,
    policy: Policy | None,
    callbacks: Callbacks,
) -> ChatResult:
    policy = policy or Policy.from_settings()
    started = time.perf_counter()
    attempts = 0
    schema = options.json_schema
    while True:
        attempts += 1
        attempt = await _call_with_retries(endpoint, messages, options, policy, callbacks)
        text = attempt.text
        data = None
        try:
            if schema is not None:
                data = extract_json(text)
                _validate(data, schema)
            if options.reject_echo:
                _reject_echo(messages, text, data)
            break
        except ValueError as error:
            what = "invalid JSON" if schema is not None else "an invalid reply"
            logger.warning("%s gave %s (attempt %d): %s", endpoint.name, what, attempts, error)
            if attempts >= policy.json_attempts:
                valid = "valid JSON" if schema is not None else "a valid reply"
                raise LLMBadResponse(
                    f"{endpoint.name} ({endpoint.model}) did not give {valid} in {attempts} tries: {error}",
                    last_text=text,
                    echoed=isinstance(error, EchoedPrompt),
                ) from None
            if callbacks.on_restart is not None:
                callbacks.on_restart()

    result = ChatResult(
        text=text, data=data, model=attempt.model, attempts=attempts, hit_token_limit=attempt.finish_reason == "length"
    )
    if options.word_limit is not None and schema is None:
        result.text, count = truncate_words(text, options.word_limit)
        if count > options.word_limit:
            warning = (
                f"Response exceeded word limit of {options.word_limit}, "
                f"truncated from {count} to {options.word_limit} words"
            )
            logger.warning(warning)
            result.warnings.append(warning)
            result.words_before_truncation = count
    if attempt.prompt_tokens is None or attempt.completion_tokens is None:
        result.usage_estimated = True
        result.prompt_tokens = estimate_tokens(messages)
        result.completion_tokens = max(1, len(text) // 4) if text else 0
    else:
        result.prompt_tokens = attempt.prompt_tokens
        result.completion_tokens = attempt.completion_tokens
        result.cached_tokens = attempt.cached_tokens
    result.cost = price_call(endpoint, result)
    result.latency_ms = round((time.perf_counter() - started) * 1000)
    return result
