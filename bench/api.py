"""The JSON API against the browser's path: debates created and followed over the API (POST /api/v1/debates,
then its Server-Sent Events) and through the pages (the new-debate form, then the debate page's websocket), in
the same run against the same server; the server's CPU per debate each way, and a token's latency from the LLM
server to an SSE client (?tokens=1) against a websocket spectator of the same debate.
Targets: API CPU per debate <= 1.1x the browser's; SSE token latency <= 1.2x the websocket's.

    uv run python bench/api.py [--debates 100] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_with_temp_db, free_port, parse_args, print_table, start_test_server
from bench.live_latency import STAMP, TOKEN_PUSH, cpu_seconds, start_site, wait_up, warmed_up

USER, PASSWORD = "bench", "bench-pass-123"


async def browser_session(base: str) -> tuple[aiohttp.ClientSession, aiohttp.CookieJar]:
    jar = aiohttp.CookieJar(unsafe=True)
    session = aiohttp.ClientSession(cookie_jar=jar)
    async with session.get(base + "/accounts/login/") as response:
        await response.text()
    csrf = next(c.value for c in jar if c.key == "csrftoken")
    login = {"username": USER, "password": PASSWORD, "csrfmiddlewaretoken": csrf}
    async with session.post(base + "/accounts/login/", data=login) as response:
        await response.text()
    return session, jar


async def create_by_form(
    session: aiohttp.ClientSession, jar: aiohttp.CookieJar, base: str, seats: dict, turns: int
) -> int:
    csrf = next(c.value for c in jar if c.key == "csrftoken")
    form = {
        "csrfmiddlewaretoken": csrf,
        "format": "duel",
        "topic": "Is the API as cheap as the page?",
        "visibility": "private",
        "seat_a": seats["a"],
        "seat_b": seats["b"],
        "option_turns": turns,
        "option_word_limit": 0,
    }
    async with session.post(base + "/debates/new/", data=form, allow_redirects=False) as response:
        assert response.status == 302, await response.text()
        return int(response.headers["Location"].rstrip("/").rsplit("/", 1)[1])


async def follow_by_socket(
    base: str, debate_id: int, cookies: aiohttp.CookieJar, stamps: list[float] | None = None
) -> None:
    url = base.replace("http", "ws") + f"/ws/debates/{debate_id}/?since=0"
    async with (
        aiohttp.ClientSession(cookie_jar=cookies) as session,
        session.ws_connect(url, origin=base, max_msg_size=0) as socket,
    ):
        async for message in socket:
            if message.type != aiohttp.WSMsgType.TEXT:
                break
            if stamps is not None:
                now = time.time() * 1e6
                for tokens in TOKEN_PUSH.findall(message.data):
                    stamps.extend((now - int(s)) / 1000 for s in STAMP.findall(tokens))
            if "status-completed" in message.data:
                return


async def create_by_api(session: aiohttp.ClientSession, base: str, seats: dict, turns: int) -> int:
    body = {"topic": "Is the API as cheap as the page?", "seats": seats, "options": {"turns": turns}}
    async with session.post(base + "/api/v1/debates", json=body) as response:
        assert response.status == 201, await response.text()
        return (await response.json())["id"]


async def follow_by_sse(
    session: aiohttp.ClientSession, base: str, debate_id: int, stamps: list[float] | None = None
) -> None:
    query = "?tokens=1" if stamps is not None else ""
    timeout = aiohttp.ClientTimeout(total=None)
    async with session.get(f"{base}/api/v1/debates/{debate_id}/events{query}", timeout=timeout) as response:
        kind = ""
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "token" and stamps is not None:
                now = time.time() * 1e6
                stamps.extend((now - int(s)) / 1000 for s in STAMP.findall(json.loads(line[6:])["text"]))
            elif line.startswith("data: ") and kind == "end":
                return


async def run(args: argparse.Namespace, base: str, site, log: Path, token: str, seats: dict) -> None:
    await wait_up(base, site, log)
    await warmed_up(site.pid)
    session, jar = await browser_session(base)
    api = aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"})
    try:
        used = cpu_seconds(site.pid)
        started = time.perf_counter()
        ids = [await create_by_form(session, jar, base, seats, args.turns) for _ in range(args.debates)]
        await asyncio.gather(*(follow_by_socket(base, i, jar) for i in ids))
        browser_wall, browser_cpu = time.perf_counter() - started, cpu_seconds(site.pid) - used
        await warmed_up(site.pid)
        used = cpu_seconds(site.pid)
        started = time.perf_counter()
        ids = [await create_by_api(api, base, seats, args.turns) for _ in range(args.debates)]
        await asyncio.gather(*(follow_by_sse(api, base, i) for i in ids))
        api_wall, api_cpu = time.perf_counter() - started, cpu_seconds(site.pid) - used
        # One debate followed both ways at once: the same tokens, stamped as they left the LLM server.
        await warmed_up(site.pid)
        socket_ms: list[float] = []
        sse_ms: list[float] = []
        debate = await create_by_api(api, base, seats, args.latency_turns)
        await asyncio.gather(follow_by_socket(base, debate, jar, socket_ms), follow_by_sse(api, base, debate, sse_ms))
    finally:
        await session.close()
        await api.close()
    if not socket_ms or not sse_ms:
        raise RuntimeError(f"no stamped tokens: websocket {len(socket_ms)}, SSE {len(sse_ms)}")
    n = args.debates
    browser_each, api_each = browser_cpu / n * 1000, api_cpu / n * 1000
    socket_p50, sse_p50 = statistics.median(socket_ms), statistics.median(sse_ms)
    print_table(
        [
            ("debates each way", f"{n}", f"duels of {args.turns} turn(s), no judge"),
            (
                "browser: server CPU per debate",
                f"{browser_each:.1f} ms",
                f"form + websocket; wall {browser_wall:.1f} s",
            ),
            ("API: server CPU per debate", f"{api_each:.1f} ms", f"POST + SSE; wall {api_wall:.1f} s"),
            ("API / browser CPU per debate", f"{api_each / browser_each:.2f}x", "target <= 1.1x"),
            ("websocket token latency p50", f"{socket_p50:.1f} ms", f"{len(socket_ms)} tokens"),
            ("SSE token latency p50", f"{sse_p50:.1f} ms", f"{len(sse_ms)} tokens"),
            ("SSE / websocket token latency p50", f"{sse_p50 / socket_p50:.2f}x", "target <= 1.2x"),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debates", type=int, default=100)
    parser.add_argument("--turns", type=int, default=1)
    parser.add_argument("--latency-turns", type=int, default=3, help="turns of the debate whose tokens are timed")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per call before the first token")
    parser.add_argument("--token-rate", type=float, default=40.0, help="tokens a second after the first")
    parser.add_argument("--reply-words", type=int, default=20)
    smoke = {"debates": 2, "turns": 1, "latency_turns": 1, "latency": 0.01, "token_rate": 200.0, "reply_words": 5}
    args = parse_args(parser, smoke)
    server, llm_url = start_test_server(args.latency, args.token_rate, args.reply_words, "--stamp-tokens")
    django_with_temp_db(llm_url)
    from django.contrib.auth import get_user_model

    from api.tokens import create_token
    from personas.models import Persona

    # Staff: no per-user caps, so a hundred debates may run at once either way.
    user = get_user_model().objects.create_user(USER, password=PASSWORD, is_staff=True)
    _, token = create_token(user, "bench", read_only=False)
    names = {p.name: p.pk for p in Persona.objects.all()}
    seats = {"a": names["Ada Sterling"], "b": names["Marcus Vale"]}
    port = free_port()
    log = Path(os.environ["CHAOSLM_TRANSCRIPTS_DIR"]) / "runserver.log"
    os.environ["CHAOSLM_API_CALLS_PER_MINUTE"] = "0"  # the bench's calls are not what the rate limit is for
    site = start_site(port, log)
    try:
        asyncio.run(run(args, f"http://127.0.0.1:{port}", site, log, token, seats))
    finally:
        site.terminate()
        server.terminate()


if __name__ == "__main__":
    main()
