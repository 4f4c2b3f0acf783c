"""Web latency under load: `GET /` while one user runs the per-user cap's worth of debates, and while
strangers upload large bodies.

Starts the test server (streaming tokens), a real ChaosLM server (runserver, daphne, inline runner:
the debates run on the web server's own event loop, as in the embedded setup), logs a user in, and
times `GET /` idle; then starts CHAOSLM_MAX_RUNNING_DEBATES judged duels through the real form
(checking that one more is refused), watches each over its websocket as its owner would, and times
`GET /` again while they run. Then times `GET /` while two anonymous clients (a process of their own)
post 30 MB multipart bodies to the tournament form, one after another, each sent whole before its answer
is read (a 413 from CHAOSLM_MAX_REQUEST_BYTES). Prints p50/p99 each way and their ratio to idle, measured
in the same run. Target: ratio <= 3x.

    uv run python bench/web_under_load.py [--smoke] [--seconds 20] [--turns 40] [--token-rate 100] [--upload-mb 30]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_with_temp_db, free_port, print_table, start_test_server
from bench.live_latency import start_site, wait_up

PASSWORD = "bench-pass-123"


async def log_in(session: aiohttp.ClientSession, base: str) -> None:
    async with session.get(base + "/accounts/login/") as response:
        await response.text()
    login = {"username": "bench", "password": PASSWORD, "csrfmiddlewaretoken": csrf(session)}
    async with session.post(base + "/accounts/login/", data=login, allow_redirects=False) as response:
        if response.status != 302:
            raise RuntimeError(f"logging in answered {response.status}")


def csrf(session: aiohttp.ClientSession) -> str:
    return next(c.value for c in session.cookie_jar if c.key == "csrftoken")


async def start_duel(session: aiohttp.ClientSession, base: str, ids: dict[str, int], turns: int) -> int | None:
    """Submit the new-debate form; the new debate's id, or None when the page refused it (the cap)."""
    form = {
        "csrfmiddlewaretoken": csrf(session),
        "format": "duel",
        "topic": "Should cities ban private cars?",
        "premise": "Cities should ban private cars",
        "visibility": "private",
        "seat_a": ids["Ada Sterling"],
        "seat_b": ids["Marcus Vale"],
        "seat_judge": ids["Judge Ines Okafor"],
        "option_turns": turns,
        "option_word_limit": 0,
    }
    async with session.post(base + "/debates/new/", data=form, allow_redirects=False) as response:
        if response.status == 302:
            return int(response.headers["Location"].rstrip("/").rsplit("/", 1)[1])
        body = await response.text()
        if "the most one person may run at once" not in body:
            text = " ".join(re.sub("<[^>]+>", " ", body).split())[:600]
            raise RuntimeError(f"the form neither started the debate nor named the cap ({response.status}): {text}")
        return None


def watch(urls: list[str], origin: str, cookie: str, received: Any) -> None:
    """The owner's open debate pages, in a process of their own so their work is not in the timings:
    each socket receives every push, as a browser's would."""

    async def one(session: aiohttp.ClientSession, url: str) -> None:
        async with session.ws_connect(url, max_msg_size=0, origin=origin, headers={"Cookie": cookie}) as socket:
            async for message in socket:
                if message.type != aiohttp.WSMsgType.TEXT:
                    return
                with received.get_lock():
                    received.value += 1

    async def all_of_them() -> None:
        async with aiohttp.ClientSession() as session:
            await asyncio.gather(*(one(session, url) for url in urls))

    asyncio.run(all_of_them())


async def time_home(session: aiohttp.ClientSession, base: str, seconds: float, pause: float) -> list[float]:
    """`GET /` one after another (a person clicking about) for `seconds`; each time in ms."""
    times: list[float] = []
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        started = time.perf_counter()
        async with session.get(base + "/") as response:
            await response.read()
            if response.status != 200:
                raise RuntimeError(f"GET / answered {response.status}")
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(pause)
    return times


def upload(port: int, megabytes: int, seconds: float, statuses: Any, clients: int = 2) -> None:
    """`clients` strangers posting `megabytes` MB multipart bodies to the tournament form for `seconds`, each
    sending its whole body before reading the answer (as a browser uploading a file does); the status of
    each answer is counted in `statuses` (a dict shared with the bench)."""
    boundary = "chaoslmbench"
    part = f'--{boundary}\r\nContent-Disposition: form-data; name="questions_file"; filename="q.csv"\r\n\r\n'
    body = part.encode() + b"x" * (megabytes * 1024 * 1024) + f"\r\n--{boundary}--\r\n".encode()
    head = (
        f"POST /tournaments/new/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()

    def one_client() -> None:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            status = "connection error"
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
                    sock.sendall(head)
                    sock.sendall(body)
                    answer = sock.recv(64)
                    status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/") else "no answer"
            except OSError:
                pass
            statuses[status] = statuses.get(status, 0) + 1

    with ThreadPoolExecutor(clients) as pool:
        for _ in range(clients):
            pool.submit(one_client)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time the process used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def sample(
    session: aiohttp.ClientSession, base: str, args: argparse.Namespace, pid: int
) -> tuple[list[float], float]:
    """`time_home`, and the web process's CPU over that time as a share of one core."""
    cpu, wall = cpu_seconds(pid), time.perf_counter()
    times = await time_home(session, base, args.seconds, args.pause)
    return times, (cpu_seconds(pid) - cpu) / (time.perf_counter() - wall)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def running_count() -> int:
    from debates.models import Debate

    return Debate.objects.filter(status=Debate.Status.RUNNING).count()


async def run(
    args: argparse.Namespace, base: str, cap: int, site: subprocess.Popen[bytes], log: Path
) -> list[tuple[str, str, str]]:
    from personas.models import Persona

    pid = site.pid
    await wait_up(base, site, log)
    ids = {p.name: p.pk for p in await asyncio.to_thread(lambda: list(Persona.objects.all()))}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        await log_in(session, base)
        await time_home(session, base, 1.0, args.pause)  # warm up: templates, connections
        before, before_cpu = await sample(session, base, args, pid)

        started = [await start_duel(session, base, ids, args.turns) for _ in range(cap + 1)]
        debate_ids = [d for d in started if d is not None]
        if len(debate_ids) != cap or started[-1] is not None:
            raise RuntimeError(f"expected {cap} debates started and one refused, got {started}")
        ws = base.replace("http", "ws")
        cookie = "; ".join(f"{c.key}={c.value}" for c in session.cookie_jar)
        received = multiprocessing.Value("i", 0)
        urls = [f"{ws}/ws/debates/{d}/?since=0" for d in debate_ids]
        watcher = multiprocessing.get_context("fork").Process(target=watch, args=(urls, base, cookie, received))
        watcher.start()
        await asyncio.sleep(1.0)  # past the plans: every debate is streaming turns
        loaded, load_cpu = await sample(session, base, args, pid)
        still_running = await asyncio.to_thread(running_count)
        for debate_id in debate_ids:
            async with session.post(
                f"{base}/debates/{debate_id}/end/", headers={"X-CSRFToken": csrf(session)}
            ) as response:
                await response.read()
        # The machine's other work changes over a run: idle is sampled on both sides of the load.
        for _ in range(600):
            if await asyncio.to_thread(running_count) == 0:
                break
            await asyncio.sleep(0.1)
        watcher.terminate()
        after, after_cpu = await sample(session, base, args, pid)

        statuses = multiprocessing.Manager().dict()
        port = int(base.rsplit(":", 1)[1])
        uploads = multiprocessing.get_context("fork").Process(
            target=upload, args=(port, args.upload_mb, args.seconds + 2.0, statuses)
        )
        uploads.start()
        await asyncio.sleep(1.0)  # both clients mid-upload
        uploading, upload_cpu = await sample(session, base, args, pid)
        await asyncio.to_thread(uploads.join)

    idle, idle_cpu = before + after, (before_cpu + after_cpu) / 2
    idle50, idle99 = statistics.median(idle), percentile(idle, 0.99)
    load50, load99 = statistics.median(loaded), percentile(loaded, 0.99)
    up50, up99 = statistics.median(uploading), percentile(uploading, 0.99)
    answers = ", ".join(f"{n} x {status}" for status, n in sorted(statuses.items()))
    return [
        ("debates running (the per-user cap)", f"{cap}", f"{still_running} still running when sampling ended"),
        ("one more start", "refused", "the form names the cap"),
        ("websocket pushes received", f"{received.value}", "the owner watching each debate"),
        ("GET / samples idle / under load", f"{len(idle)} / {len(loaded)}", "idle: before and after the load"),
        ("web process CPU idle / under load", f"{idle_cpu:.0%} / {load_cpu:.0%}", "of one core"),
        ("GET / p50 idle", f"{idle50:.1f} ms", ""),
        ("GET / p99 idle", f"{idle99:.1f} ms", ""),
        ("GET / p50 under load", f"{load50:.1f} ms", ""),
        ("GET / p99 under load", f"{load99:.1f} ms", ""),
        ("p50 ratio (load / idle)", f"{load50 / idle50:.2f}x", "target <= 3x"),
        ("p99 ratio (load / idle)", f"{load99 / idle99:.2f}x", "target <= 3x"),
        (f"{args.upload_mb} MB uploads answered", answers, "two clients, one upload after another"),
        ("web process CPU during uploads", f"{upload_cpu:.0%}", "of one core"),
        ("GET / p50 during uploads", f"{up50:.1f} ms", f"{len(uploading)} samples"),
        ("GET / p99 during uploads", f"{up99:.1f} ms", ""),
        ("p50 ratio (uploads / idle)", f"{up50 / idle50:.2f}x", "target <= 3x"),
        ("p99 ratio (uploads / idle)", f"{up99 / idle99:.2f}x", "target <= 3x"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="a few seconds of each, to check the bench runs")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to sample GET / each way")
    parser.add_argument("--turns", type=int, default=40, help="public statements per duel")
    parser.add_argument("--token-rate", type=float, default=100.0, help="tokens a second per streamed reply")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between two GET /")
    parser.add_argument("--upload-mb", type=int, default=30, help="the size of each upload (MB)")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.turns = 2.0, 4
    server, llm_url = start_test_server(0.05, args.token_rate, 80)
    django_with_temp_db(llm_url)
    from django.conf import settings
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("bench", password=PASSWORD)
    cap = settings.CHAOSLM_MAX_RUNNING_DEBATES
    port = free_port()
    log = Path(os.environ["CHAOSLM_TRANSCRIPTS_DIR"]) / "runserver.log"  # the bench's throwaway folder
    site = start_site(port, log)
    try:
        rows = asyncio.run(run(args, f"http://127.0.0.1:{port}", cap, site, log))
    finally:
        site.terminate()
        server.terminate()
        site.wait(10)
    print_table(rows)


if __name__ == "__main__":
    main()
