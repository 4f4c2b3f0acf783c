"""A real HTTP server that speaks the OpenAI Chat Completions protocol, for tests and benchmarks.

It answers streaming (SSE chunks, a usage chunk when asked, `[DONE]`) and plain requests, in
JSON mode too, with replies that are scripted (rules matched against the last user message)
or derived deterministically from the conversation, so the same conversation always gets the
same reply. Knobs: latency before the first token, token rate, and faults (HTTP 500, 429 with
Retry-After, hangs, malformed JSON, dropped streams, streams that stall half-way), always or with a probability.

In-process use: `with TestLLMServer() as server: server.url ...`. As a program:
`python -m chaoslm.llm.testserver --port 8090 --latency 0.2`. Either way it can be driven over
HTTP: POST /_control/config, POST /_control/reset, GET /_control/requests.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web

FAULT_KINDS = ("500", "429", "hang", "malformed_json", "drop", "stall")

_VOCABULARY = [
    "evidence",
    "suggests",
    "that",
    "the",
    "premise",
    "holds",
    "only",
    "when",
    "incentives",
    "align",
    "and",
    "institutions",
    "adapt",
    "quickly",
    "yet",
    "history",
    "shows",
    "costs",
    "fall",
    "on",
    "those",
    "least",
    "able",
    "to",
    "bear",
    "them",
    "so",
    "we",
    "must",
    "weigh",
    "liberty",
    "against",
    "security",
    "and",
    "ask",
    "who",
    "decides",
    "what",
    "counts",
    "as",
    "progress",
    "in",
    "a",
    "fair",
    "society",
    "my",
    "opponent",
    "overlooks",
    "the",
    "data",
    "on",
    "outcomes",
    "while",
    "I",
    "insist",
    "that",
    "principles",
    "matter",
    "more",
    "than",
    "slogans",
    "because",
    "trust",
    "once",
    "lost",
    "is",
    "hard",
    "to",
    "rebuild",
    "and",
    "every",
    "policy",
    "creates",
    "winners",
]


@dataclass
class Rule:
    """A scripted reply or fault for requests whose last user message matches `match` (a regex)."""

    match: str = ""
    reply: str | None = None
    fault: str | None = None
    # How many matching requests this rule applies to; None means all of them.
    times: int | None = None
    probability: float = 1.0
    retry_after: int = 1
    model: str | None = None
    # The reply's finish_reason: "length" answers as a model cut off by its max_tokens.
    finish_reason: str = "stop"


@dataclass
class Config:
    latency: float = 0.0
    token_rate: float = 0.0  # chunks a second after the first; 0 sends them all at once
    reply_words: int = 40
    hang_seconds: float = 3600.0
    # Answer one request at a time, the others waiting in the server's queue, as llama-cpp-python's server does.
    one_at_a_time: bool = False
    seed: int = 0
    # Each streamed chunk carries the moment it left the server, "[t<microseconds>] ", for latency benchmarks.
    stamp_tokens: bool = False
    # Report the system message's tokens as read from a prompt cache (usage.prompt_tokens_details.cached_tokens),
    # as OpenAI does for a prompt prefix it has seen.
    prompt_cache: bool = False
    # A reply sent whole carries this as its `timings`, as llama.cpp's server reports how fast it read the prompt
    # and wrote the reply ({"prompt_per_second": 66.7, "predicted_per_second": 23.6}); None: no timings.
    timings: dict[str, float] | None = None
    rules: list[Rule] = field(default_factory=list)
    # Random faults for soak tests: kind -> probability, tried in order.
    fault_rates: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Config:
        raw = dict(raw)
        raw["rules"] = [Rule(**r) for r in raw.get("rules", [])]
        for kind in raw.get("fault_rates", {}):
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault {kind!r}")
        return cls(**raw)


@dataclass
class RecordedRequest:
    body: dict[str, Any]
    started: float
    finished: float | None = None
    outcome: str = ""
    # With `one_at_a_time`: when the server began on it, after any wait in its queue.
    served: float | None = None
    # The client's address and port: requests sharing one are on the same (kept-alive) connection.
    peer: str = ""
    # The usage the server reported for it (prompt, completion and cached tokens), once it answered.
    usage: dict[str, Any] | None = None

    @property
    def messages(self) -> list[dict[str, str]]:
        return self.body.get("messages", [])

    @property
    def last_user(self) -> str:
        return next((m["content"] for m in reversed(self.messages) if m.get("role") == "user"), "")

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m.get("role") == "system"), "")


def _digest(body: dict[str, Any]) -> int:
    blob = json.dumps([body.get("model"), body.get("messages")], sort_keys=True).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


_NAMES_CHOICE = re.compile(r"Reply with exactly one of these names and nothing else: '(.+?)' or '(.+?)'\.")
_MUST_BE = re.compile(r"The \"winner\" must be '(.+?)'")


def _reason(said: random.Random) -> str:
    """A sentence of the test server's own for a JSON field: different from one reply to the next, as a model's
    are, so that one reply's reason quoted in the next prompt is not given back as the next reply's."""
    return "Because " + " ".join(said.choice(_VOCABULARY) for _ in range(8)) + "."


def _json_from_schema(schema: dict[str, Any], rng: random.Random, said: random.Random) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _json_from_schema(sub, rng, said) for name, sub in props.items()}
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 0)), int(schema.get("maximum", 10)))
    if kind == "number":
        return round(rng.uniform(schema.get("minimum", 0), schema.get("maximum", 1)), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        # A ranking (a card's verdict): every choice once, in an order of the test server's choosing.
        choices = schema.get("items", {}).get("enum", [])
        return rng.sample(choices, len(choices)) if schema.get("uniqueItems") and schema.get("minItems") else []
    return _reason(said)


def _json_example_in(prompt: str) -> dict[str, Any] | None:
    for line in prompt.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def default_reply(body: dict[str, Any], reply_words: int) -> str:
    """The deterministic reply for a conversation with no matching rule."""
    rng = random.Random(_digest(body))
    messages = body.get("messages", [])
    last = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    names = _NAMES_CHOICE.search(last)
    if names:
        return names.group(rng.randint(1, 2))
    response_format = body.get("response_format") or {}
    schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")
    example = _json_example_in(last)
    if schema or example is not None or response_format.get("type") in {"json_object", "json_schema"}:
        # Its sentences from a generator of their own: the choices and scores stay what they were.
        said = random.Random(_digest(body) + 1)
        value = _json_from_schema(schema, rng, said) if schema else dict(example or {})
        if not schema:  # as a model that follows the example's form: its sentences in words of its own
            value = {k: _reason(said) if isinstance(v, str) and len(v.split()) >= 4 else v for k, v in value.items()}
        if "score" in value and not schema:
            value["score"] = rng.randint(3, 9)
        must_be = _MUST_BE.search(last)
        if must_be and "winner" in value:
            value["winner"] = must_be.group(1)
        return json.dumps(value)
    words = [rng.choice(_VOCABULARY) for _ in range(reply_words)]
    return f"Point {rng.randint(1, 999)}: " + " ".join(words).capitalize() + "."


@dataclass(frozen=True)
class _Reply:
    """The envelope of one reply, the same in every chunk: OpenAI's chat completion format."""

    ident: str
    model: str
    usage: dict[str, Any]
    finish: str = "stop"

    def _envelope(self, kind: str) -> dict[str, Any]:
        return {"id": self.ident, "object": kind, "created": int(time.time()), "model": self.model}

    def completion(self, text: str) -> dict[str, Any]:
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": self.finish}
        return {**self._envelope("chat.completion"), "choices": [choice], "usage": self.usage}

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **self._envelope("chat.completion.chunk"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def usage_chunk(self) -> dict[str, Any]:
        return {**self._envelope("chat.completion.chunk"), "choices": [], "usage": self.usage}


class TestLLMServer:
    """The server; runs its own event loop in a daemon thread when used in-process."""

    __test__ = False  # not a pytest test class

    def __init__(self, host: str = "127.0.0.1", port: int = 0, config: Config | None = None) -> None:
        self.host = host
        self.port = port
        self.config = config or Config()
        self.requests: list[RecordedRequest] = []
        self._rule_uses: dict[int, int] = {}
        self._rng = random.Random(self.config.seed)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._one_at_a_time: asyncio.Lock | None = None  # made on the server's loop

    # -- control -------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def configure(self, **changes: Any) -> None:
        with self._lock:
            merged = asdict(self.config) | changes
            self.config = Config.from_dict(merged)
            self._rule_uses.clear()
            self._rng = random.Random(self.config.seed)

    def reset(self) -> None:
        with self._lock:
            self.config = Config()
            self.requests.clear()
            self._rule_uses.clear()
            self._rng = random.Random(0)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/_control/config", self._control_config)
        app.router.add_post("/_control/reset", self._control_reset)
        app.router.add_get("/_control/requests", self._control_requests)
        return app

    async def start_async(self) -> None:
        # Handlers end when their client hangs up, so a "hang" does not outlive the request.
        self._runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def start(self) -> TestLLMServer:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self.start_async())
            ready.set()
            self._loop.run_forever()
            # Closed here, in its own thread, once stopped: an unclosed loop is reported when collected, in
            # whatever code happens to be running then.
            self._loop.close()

        self._thread = threading.Thread(target=run, name="test-llm-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is None or self._runner is None:
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> TestLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- behaviour -----------------------------------------------------------------------------
    def _choose(self, last_user: str) -> Rule:
        """The rule a request is answered by, consuming one of its uses: a scripted one, a random fault, or none
        (`Rule()`: the default reply)."""
        with self._lock:
            for index, rule in enumerate(self.config.rules):
                if rule.match and not re.search(rule.match, last_user):
                    continue
                used = self._rule_uses.get(index, 0)
                if rule.times is not None and used >= rule.times:
                    continue
                if rule.probability < 1.0 and self._rng.random() >= rule.probability:
                    continue
                self._rule_uses[index] = used + 1
                return rule
            for kind, rate in self.config.fault_rates.items():
                if self._rng.random() < rate:
                    return Rule(fault=kind)
        return Rule()

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response({"error": {"message": "body is not JSON"}}, status=400)
        peer = request.transport.get_extra_info("peername") if request.transport else None
        record = RecordedRequest(body=body, started=time.monotonic(), peer=f"{peer[0]}:{peer[1]}" if peer else "")
        with self._lock:
            self.requests.append(record)
            config = self.config
        rule = self._choose(record.last_user)
        try:
            if not config.one_at_a_time:
                return await self._answer(request, body, config, rule, record)
            return await self._answer_in_turn(request, record, body, config, rule)
        finally:
            record.finished = time.monotonic()
            record.outcome = rule.fault or "ok"

    def _turn(self) -> asyncio.Lock:
        if self._one_at_a_time is None:
            self._one_at_a_time = asyncio.Lock()  # on the server's loop
        return self._one_at_a_time

    async def _answer_in_turn(
        self,
        request: web.Request,
        record: RecordedRequest,
        body: dict[str, Any],
        config: Config,
        rule: Rule,
    ) -> web.StreamResponse:
        """One request at a time, as llama-cpp-python's server: a request whose client left while it waited is
        dropped, a stream stops when its client leaves, and a reply asked for whole is written to its end
        even after its client has left (llama.cpp writes it in a thread nothing interrupts)."""

        async def in_turn() -> web.StreamResponse:
            async with self._turn():
                if request.transport is None or request.transport.is_closing():
                    return web.json_response({"error": {"message": "Client closed request"}}, status=400)
                record.served = time.monotonic()
                return await self._answer(request, body, config, rule, record)

        if body.get("stream"):
            return await in_turn()
        return await asyncio.shield(asyncio.ensure_future(in_turn()))

    async def _answer(
        self,
        request: web.Request,
        body: dict[str, Any],
        config: Config,
        rule: Rule,
        record: RecordedRequest,
    ) -> web.StreamResponse:
        fault = rule.fault
        if config.latency:
            await asyncio.sleep(config.latency)
        if fault == "500":
            return web.json_response({"error": {"message": "injected server error"}}, status=500)
        if fault == "429":
            return web.json_response(
                {"error": {"message": "injected rate limit", "type": "rate_limit"}},
                status=429,
                headers={"Retry-After": str(rule.retry_after)},
            )
        if fault == "hang" or (fault == "stall" and not body.get("stream")):
            await asyncio.sleep(config.hang_seconds)
        text = rule.reply if rule.reply is not None else default_reply(body, config.reply_words)
        if fault == "malformed_json":
            text = '{"score": 7, "reasoning": "cut off'
        chunks = re.findall(r"\s*\S+", text) or [text]
        prompt_tokens = sum(len(m.get("content", "")) for m in body.get("messages", [])) // 4 + 1
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(chunks),
            "total_tokens": prompt_tokens + len(chunks),
        }
        if config.prompt_cache:
            system = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"), "")
            usage["prompt_tokens_details"] = {"cached_tokens": min(len(system) // 4, prompt_tokens)}
        record.usage = usage
        model = rule.model or body.get("model", "test-model")
        reply_to = _Reply(ident=f"chatcmpl-{_digest(body):x}", model=model, usage=usage, finish=rule.finish_reason)
        if not body.get("stream"):
            if config.token_rate:
                # A model takes as long to write a reply it sends whole as one it streams.
                await asyncio.sleep((len(chunks) - 1) / config.token_rate)
            if fault == "drop":
                return await self._drop_whole(request, reply_to.completion(text))
            whole = reply_to.completion(text)
            if config.timings is not None:
                whole["timings"] = dict(config.timings)
            return web.json_response(whole)
        return await self._stream(request, body, config, fault, chunks, reply_to)

    async def _stream(
        self,
        request: web.Request,
        body: dict[str, Any],
        config: Config,
        fault: str | None,
        chunks: list[str],
        reply: _Reply,
    ) -> web.StreamResponse:
        """The reply as server-sent events: a chunk a word, at the configured rate, then usage and [DONE]."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)

        async def send(payload: dict[str, Any]) -> None:
            await response.write(f"data: {json.dumps(payload)}\n\n".encode())

        await send(reply.chunk({"role": "assistant", "content": ""}))
        pause = 1.0 / config.token_rate if config.token_rate else 0.0
        for index, piece in enumerate(chunks):
            if fault == "drop" and index >= len(chunks) // 2:
                # Close the connection mid-reply, as a crashed or restarted server would.
                if request.transport is not None:
                    request.transport.close()
                return response
            if fault == "stall" and index == len(chunks) // 2:
                # Fall silent mid-reply with the connection open, as a stuck server would.
                await asyncio.sleep(config.hang_seconds)
            if config.stamp_tokens:
                piece = f"[t{time.time() * 1e6:.0f}] "
            await send(reply.chunk({"content": piece}))
            if pause:
                await asyncio.sleep(pause)
        await send(reply.chunk({}, reply.finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            await send(reply.usage_chunk())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    @staticmethod
    async def _drop_whole(request: web.Request, reply: dict[str, Any]) -> web.StreamResponse:
        """Half of a whole reply, then the connection closed, as a crashed or restarted server would."""
        payload = json.dumps(reply).encode()
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.content_length = len(payload)
        await response.prepare(request)
        await response.write(payload[: len(payload) // 2])
        if request.transport is not None:
            request.transport.close()
        return response

    async def _models(self, request: web.Request) -> web.Response:
        if self.config.one_at_a_time:
            async with self._turn():  # as llama-cpp-python's: it waits for the model like a completion does
                pass
        return web.json_response({"object": "list", "data": [{"id": "test-model", "object": "model"}]})

    async def _control_config(self, request: web.Request) -> web.Response:
        try:
            self.configure(**(await request.json()))
        except (TypeError, ValueError) as error:
            return web.json_response({"error": str(error)}, status=400)
        return web.json_response(asdict(self.config))

    async def _control_reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({"ok": True})

    async def _control_requests(self, request: web.Request) -> web.Response:
        with self._lock:
            rows = [asdict(r) for r in self.requests]
        return web.json_response(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description="OpenAI-compatible test server for ChaosLM")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before the first token")
    parser.add_argument("--token-rate", type=float, default=0.0, help="chunks a second; 0 = all at once")
    parser.add_argument("--reply-words", type=int, default=40, help="length of the default replies")
    parser.add_argument("--one-at-a-time", action="store_true", help="answer one request at a time, as llama.cpp")
    parser.add_argument("--stamp-tokens", action="store_true", help="stream send timestamps instead of words")
    parser.add_argument("--config", help="a JSON file with a full Config (rules, fault_rates, ...)")
    args = parser.parse_args()
    config = Config(
        latency=args.latency,
        token_rate=args.token_rate,
        reply_words=args.reply_words,
        stamp_tokens=args.stamp_tokens,
        one_at_a_time=args.one_at_a_time,
    )
    if args.config:
        with open(args.config) as handle:
            config = Config.from_dict(json.load(handle))
    server = TestLLMServer(args.host, args.port, config)
    web.run_app(
        server.app(),
        host=args.host,
        port=args.port,
        access_log=None,
        print=None,
        handler_cancellation=True,
        shutdown_timeout=1.0,
    )


if __name__ == "__main__":
    main()
