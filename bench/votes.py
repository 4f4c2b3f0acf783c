"""The audience's vote under a crowd: N distinct voters vote on one public debate, before it and after it, while
S websocket spectators watch it; against a plain page request in the same run.

The stack is bench/crowd.py's, on loopback: the test server, a Redis of its own, a fresh database on the
PostgreSQL of CHAOSLM_TEST_DATABASE_URL, two daphne web processes behind a pretend proxy
(CHAOSLM_BEHIND_PROXY, each voter its own address in X-Forwarded-For, so the per-address limit stays on), a
Celery worker. The debate is queued with no worker running, so its vote before stays open; every voter votes
(a tenth of them change their mind once: the last vote counts), then the worker runs the debate, every voter
votes after, and the owner closes the vote. The first S voters are also spectators: each keeps a socket on the
debate's page and does what the page does (static/js/chaoslm.js): once it has voted, it sends its box's tally
ticket on the socket and then receives the tally as it moves; when a vote opens or closes, a page whose box shows
another state fetches its own box after a random moment of up to a second. Meanwhile a plain reader loads the
debate's page as often as votes are cast, at the same concurrency.

Checks that every vote is counted exactly once (the tallies against what the voters last chose), and that the
final tally is the same everywhere: in the database, in each spectator's last box after the close, and on a
fresh load of the page; and that the last tally pushed to the voters of each vote is its stored tally. Prints
p50/p99 of the vote request and of the page request, with their ratios.

    uv run python bench/votes.py [--voters 1000] [--spectators 500] [--concurrency 20] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import re
import shutil
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import httpx2 as httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import parse_args, print_table, start_test_server
from bench.crowd import DATABASE_URL, WORKER, Stack, crowd_stack, debate_status

CHOICES = ("a", "b", "undecided")
SPREAD_MS = 1000  # audience/votes.py's: the longest a page waits before it fetches its box
TICKET = re.compile(r'data-tally-ticket="([^"]+)"')
STATE = re.compile(r'data-poll-state="([^"]*)"')
ROW = re.compile(r'<tr[^>]*>\s*<th scope="row">[^<]*</th>(.*?)</tr>', re.S)
COUNT = re.compile(r"\((\d+)\)</span>|<td>—</td>")
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
OWNER, PASSWORD = "bench-owner", "bench-owner-pw-123"


def tallies(box: str) -> dict[str, dict[str, int]]:
    """The counts a poll box shows, per phase and option (a phase it does not show is left out)."""
    shown: dict[str, dict[str, int]] = {"before": {}, "after": {}}
    table = box.partition('id="poll-tally"')[2].partition("</table>")[0]  # the tally's table, not the paired one
    for key, row in zip(CHOICES, ROW.findall(table), strict=False):
        cells = COUNT.findall(row)
        for phase, cell in zip(("before", "after"), cells, strict=False):
            if cell:
                shown[phase][key] = int(cell)
    return {phase: counts for phase, counts in shown.items() if counts}


@dataclass
class Voter:
    index: int
    session: aiohttp.ClientSession
    address: str
    choices: dict[str, str] = field(default_factory=dict)  # phase -> what they last chose
    boxes: list[tuple[float, str]] = field(default_factory=list)  # (when, a box fetched or a tally pushed)
    ticket: str = ""  # the tally ticket of its last vote's box
    state: str = ""  # the poll state its page's box shows
    socket: aiohttp.ClientWebSocketResponse | None = None
    pings: int = 0
    pushed: list[tuple[str, str]] = field(default_factory=list)  # (the vote being cast, a tally pushed meanwhile)
    connects: int = 0
    failed_fetches: int = 0

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Forwarded-For": self.address}


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


async def run(base: list[str], debate_id: int, args: argparse.Namespace, stack: Stack) -> dict[str, object]:
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=120)
    vote_ms: list[float] = []
    page_ms: list[float] = []
    refused: Counter[str] = Counter()
    voters: list[Voter] = []
    phase_now = [""]  # the vote being cast, for the tallies pushed meanwhile
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as reader:
        for i in range(args.voters):
            jar = aiohttp.CookieJar(unsafe=True)  # each voter its own cookies: its CSRF token, its voter id
            session = aiohttp.ClientSession(connector=connector, connector_owner=False, cookie_jar=jar, timeout=timeout)
            voters.append(Voter(i, session, f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256 + 1}"))
        gate = asyncio.Semaphore(args.concurrency)

        def url(voter_or_index: int, path: str) -> str:
            return base[voter_or_index % len(base)] + path

        async def open_page(voter: Voter) -> str:
            async with voter.session.get(url(voter.index, f"/debates/{debate_id}/"), headers=voter.headers) as r:
                return await r.text()

        async def fetch_box(voter: Voter) -> None:
            headers = {**voter.headers, "HX-Request": "true"}
            try:
                async with voter.session.get(url(voter.index, f"/debates/{debate_id}/poll/"), headers=headers) as r:
                    box = await r.text()
                    if r.status == 200:
                        voter.boxes.append((time.monotonic(), box))
                        voter.state = STATE.search(box).group(1)
                        return
            except (TimeoutError, aiohttp.ClientError):
                pass
            voter.failed_fetches += 1

        async def spectate(voter: Voter, stop: asyncio.Event, ready: asyncio.Event) -> None:
            """As the page: its ticket sent as the socket opens, a fetch (spread) on each push that opens or closes
            a vote; a dropped or refused socket is opened again after a pause, as the htmx ws extension does, and
            its catch-up brings the push again."""
            ws_url = url(voter.index, f"/ws/debates/{debate_id}/?since=0").replace("http", "ws", 1)
            origin = url(voter.index, "")
            fetches: list[asyncio.Task[None]] = []

            async def fetch_after(seconds: float) -> None:
                await asyncio.sleep(seconds)
                await fetch_box(voter)

            attempt = 0
            while not stop.is_set():
                try:
                    async with voter.session.ws_connect(ws_url, headers={"Origin": origin}) as ws:
                        voter.connects += 1
                        voter.socket = ws
                        if voter.ticket:
                            await ws.send_str(json.dumps({"tally_ticket": voter.ticket}))
                        ready.set()
                        while not stop.is_set():
                            try:
                                message = await ws.receive(timeout=0.5)
                            except TimeoutError:
                                continue
                            if message.type != aiohttp.WSMsgType.TEXT:
                                break
                            if 'id="poll-ping"' in message.data:
                                voter.pings += 1
                                if STATE.search(message.data).group(1) != voter.state:
                                    wait = random.random() * SPREAD_MS / 1000
                                    fetches.append(asyncio.ensure_future(fetch_after(wait)))
                            if 'id="poll-tally"' in message.data:
                                voter.pushed.append((phase_now[0], message.data))
                except (TimeoutError, aiohttp.ClientError, OSError):
                    pass
                voter.socket = None
                attempt += 1
                if not stop.is_set():
                    await asyncio.sleep(random.random() * min(2 ** (attempt - 1), 8))
            await asyncio.gather(*fetches)

        async def vote(voter: Voter, phase: str, choice: str, csrf: str) -> None:
            headers = {**voter.headers, "HX-Request": "true", "X-CSRFToken": csrf}
            data = {"phase": phase, "choice": choice}
            async with gate:
                started = time.perf_counter()
                try:
                    async with voter.session.post(url(voter.index, f"/debates/{debate_id}/poll/vote/"), data=data,
                                                  headers=headers) as r:  # fmt: skip
                        box = await r.text()
                except (TimeoutError, aiohttp.ClientError):
                    refused["no answer"] += 1  # counted or not: the check below says which
                    return
                vote_ms.append((time.perf_counter() - started) * 1000)
                if r.status != 200:
                    refused[str(r.status)] += 1
                    return
                voter.choices[phase] = choice
            voter.state = STATE.search(box).group(1)
            if (ticket := TICKET.search(box)) and ticket.group(1) != voter.ticket:
                voter.ticket = ticket.group(1)
                if voter.socket is not None and voter.index < args.spectators:
                    await voter.socket.send_str(json.dumps({"tally_ticket": voter.ticket}))

        async def read_page(i: int) -> None:
            async with gate:
                started = time.perf_counter()
                address = {"X-Forwarded-For": f"172.16.{i // 256 % 256}.{i % 256 + 1}"}
                try:
                    async with reader.get(url(i, f"/debates/{debate_id}/"), headers=address) as r:
                        await r.read()
                except (TimeoutError, aiohttp.ClientError):
                    refused["page: no answer"] += 1
                    return
                page_ms.append((time.perf_counter() - started) * 1000)

        async def phase(name: str, csrfs: dict[int, str]) -> None:
            rng = random.Random(name)
            first = {v.index: rng.choice(CHOICES) for v in voters}
            # A tenth change their mind (the last vote counts), as a person does: once their first vote is answered.
            # Sent at once, the two could be stored in either order, and "their last choice" would mean nothing.
            changing = [v.index for v in voters if rng.random() < 0.1]
            second = {i: rng.choice(CHOICES) for i in changing}

            async def ballot(voter: Voter) -> None:
                await vote(voter, name, first[voter.index], csrfs[voter.index])
                if voter.index in second:
                    await vote(voter, name, second[voter.index], csrfs[voter.index])

            ballots = [ballot(v) for v in voters]
            reads = [read_page(i) for i in range(len(voters) + len(second))]  # a page read for each vote request
            mixed = [job for pair in itertools.zip_longest(ballots, reads) for job in pair if job is not None]
            await asyncio.gather(*mixed)

        # Every voter opens the page first (its CSRF token), as a person does before voting.
        csrfs: dict[int, str] = {}
        for start in range(0, len(voters), args.concurrency):
            pages = await asyncio.gather(*(open_page(v) for v in voters[start : start + args.concurrency]))
            for voter, page in zip(voters[start : start + args.concurrency], pages, strict=True):
                csrfs[voter.index] = CSRF.search(page).group(1)
                voter.state = STATE.search(page).group(1)

        stop = asyncio.Event()
        watchers = []
        for start in range(0, args.spectators, 100):  # a hundred at a time, as bench/crowd.py's arrive
            readies = []
            for voter in voters[start : min(start + 100, args.spectators)]:
                ready = asyncio.Event()
                readies.append(ready)
                watchers.append(asyncio.ensure_future(spectate(voter, stop, ready)))
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 600)

        began = time.perf_counter()
        phase_now[0] = "before"
        await phase("before", csrfs)
        worker = stack.start("worker", WORKER)
        while (status := await asyncio.to_thread(status_of, stack.env["DATABASE_URL"], debate_id)) != "completed":
            if status == "error":
                raise RuntimeError("the debate failed: see the worker's log")
            await asyncio.sleep(0.2)
        stack.stop(worker)
        await asyncio.sleep(1.5)  # the after-vote is open on every page
        phase_now[0] = "after"
        await phase("after", csrfs)
        await asyncio.sleep(2)  # the push at the end of the last vote's interval
        voting_seconds = time.perf_counter() - began

        owner = aiohttp.ClientSession(
            connector=connector, connector_owner=False, cookie_jar=aiohttp.CookieJar(unsafe=True)
        )
        async with owner.get(base[0] + "/accounts/login/") as r:
            token = CSRF.search(await r.text()).group(1)
        login = {"username": OWNER, "password": PASSWORD, "csrfmiddlewaretoken": token}
        async with owner.post(base[0] + "/accounts/login/", data=login) as r:
            await r.read()
        token = next(c.value for c in owner.cookie_jar if c.key == "csrftoken")
        closed_at = time.monotonic()
        async with owner.post(base[0] + f"/debates/{debate_id}/poll/close/", headers={"X-CSRFToken": token}) as r:
            await r.read()
            assert r.status in (200, 302), r.status
        await owner.close()
        await asyncio.sleep(4)  # the close's push, and each page's fetch
        stop.set()
        await asyncio.gather(*watchers)

        fresh = await (await reader.get(base[1 % len(base)] + f"/debates/{debate_id}/")).text()
        for voter in voters:
            await voter.session.close()
    return {
        "voters": voters,
        "vote_ms": vote_ms,
        "page_ms": page_ms,
        "refused": refused,
        "closed_at": closed_at,
        "fresh": fresh,
        "voting_seconds": voting_seconds,
    }


def status_of(database_url: str, debate_id: int) -> str:
    """The debate's status; "" while a shared PostgreSQL refuses a connection (its slots taken): asked again."""
    try:
        return debate_status(database_url, debate_id)
    except psycopg.OperationalError:
        return ""


def stored_tally(database_url: str, debate_id: int) -> tuple[dict[str, dict[str, int]], int]:
    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT phase, choice, count(*) FROM audience_pollvote WHERE debate_id = %s GROUP BY phase, choice",
            [debate_id],
        ).fetchall()
    tally: dict[str, dict[str, int]] = {"before": dict.fromkeys(CHOICES, 0), "after": dict.fromkeys(CHOICES, 0)}
    for phase, choice, count in rows:
        tally[phase][choice] = count
    return tally, sum(count for _, _, count in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--voters", type=int, default=1000)
    parser.add_argument("--spectators", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=20, help="votes (and page loads) in flight at once")
    args = parse_args(parser, {"voters": 30, "spectators": 10, "concurrency": 10})
    args.spectators = min(args.spectators, args.voters)
    if not DATABASE_URL or not shutil.which("redis-server"):
        print_table([("votes", "left out", "needs CHAOSLM_TEST_DATABASE_URL and redis-server")])
        return
    llm, llm_url = start_test_server(0.02, 0.0, 20)
    # A pool per process, as docs/audience.md advises for a crowd: 2 web processes and a worker stay under
    # PostgreSQL's default 100 connections however many pages fetch at once.
    settings = {"CHAOSLM_BEHIND_PROXY": "1", "CHAOSLM_DB_POOL_SIZE": "25", "CHAOSLM_DB_CONN_MAX_AGE": "0"}
    with crowd_stack("votes", llm, llm_url, settings) as (stack, _):
        create = (
            f"from django.contrib.auth.models import User; User.objects.create_user({OWNER!r}, password={PASSWORD!r})"
        )
        stack.manage("shell", "-c", create)
        web = [stack.daphne(f"web-{i}", "config.asgi:application") for i in range(2)]
        base = [f"http://127.0.0.1:{port}" for _, port in web]
        for address in base:  # each process's first request starts its background imports
            httpx.get(address + "/", timeout=30)
        command = ["debate", "duel", "--topic", "Should cities ban private cars?", "--turns", "2"]
        command += ["--a", "Ada Sterling", "--b", "Marcus Vale", "--judge", "Judge Ines Okafor"]
        command += ["--visibility", "public", "--owner", OWNER, "--enqueue"]
        debate_id = int(stack.manage(*command).strip().splitlines()[-1])  # queued: no worker runs it yet
        result = asyncio.run(run(base, debate_id, args, stack))
        stored, rows = stored_tally(stack.env["DATABASE_URL"], debate_id)

    voters: list[Voter] = result["voters"]  # type: ignore[assignment]
    expected = {p: Counter(v.choices[p] for v in voters if p in v.choices) for p in ("before", "after")}
    expected_tally = {p: {c: expected[p][c] for c in CHOICES} for p in expected}
    counted_once = stored == expected_tally and rows == sum(len(v.choices) for v in voters)
    spectators = voters[: args.spectators]
    finals = [next((tallies(b) for t, b in reversed(s.boxes) if t >= result["closed_at"]), {}) for s in spectators]  # type: ignore[operator]
    same_on_spectators = sum(final == stored for final in finals)
    fresh = tallies(result["fresh"])  # type: ignore[arg-type]

    # Each vote's last tally pushed to a page, against the stored one: the push at the interval's end brought all.
    def last_pushed(spectator: Voter, phase: str) -> dict[str, int] | None:
        return next((tallies(html).get(phase) for p, html in reversed(spectator.pushed) if p == phase), None)

    last = {phase: [last_pushed(s, phase) for s in spectators] for phase in ("before", "after")}
    pushed_right = {phase: sum(t == stored[phase] for t in got if t) for phase, got in last.items()}
    pushed_to = {phase: sum(1 for t in got if t) for phase, got in last.items()}
    vote_ms, page_ms = result["vote_ms"], result["page_ms"]  # type: ignore[assignment]
    refused: Counter[str] = result["refused"]  # type: ignore[assignment]
    v50, v99, p50, p99 = (quantile(vote_ms, 0.5), quantile(vote_ms, 0.99), quantile(page_ms, 0.5),
                          quantile(page_ms, 0.99))  # fmt: skip
    print(f"{args.voters} voters, {args.spectators} spectators over 2 web processes, logs in {stack.logs}")
    print_table(
        [
            ("voters", str(args.voters), f"{len(vote_ms)} vote requests, a tenth of them changes"),
            ("votes stored (before, after)", f"{sum(stored['before'].values())}, {sum(stored['after'].values())}",
             f"expected {sum(expected['before'].values())}, {sum(expected['after'].values())}"),
            ("every vote counted once", "yes" if counted_once else "NO", "stored tally = voters' last choices"),
            ("refused votes", str(sum(refused.values())), ", ".join(f"{k}: {n}" for k, n in refused.items()) or "0"),
            ("spectators' final tally", f"{same_on_spectators}/{len(spectators)}", "same as stored, after the close"),
            ("fresh page's tally", "same" if fresh == stored else "DIFFERENT", ""),
            ("tally pushes per spectator", f"{statistics.mean(len(s.pushed) for s in spectators):.1f}",
             "at most one a second, once it voted"),
            *[(f"last {phase} tally pushed", f"{pushed_right[phase]}/{pushed_to[phase]}",
               "= stored, of the spectators it reached") for phase in ("before", "after")],
            ("box fetches per spectator", f"{statistics.mean(len(s.boxes) for s in spectators):.1f}",
             f"{statistics.mean(s.pings for s in spectators):.1f} pushes that open or close a vote"),
            ("box fetches failed", str(sum(s.failed_fetches for s in spectators)),
             f"of {sum(len(s.boxes) + s.failed_fetches for s in spectators)}; sockets opened again: "
             f"{sum(max(0, s.connects - 1) for s in spectators)}"),
            ("vote p50 ms", f"{v50:.1f}", f"page p50 {p50:.1f}"),
            ("vote p99 ms", f"{v99:.1f}", f"page p99 {p99:.1f}"),
            ("vote / page p50", f"{v50 / p50:.2f}x", "same run, same concurrency"),
            ("vote / page p99", f"{v99 / p99:.2f}x", ""),
            ("voting wall s", f"{result['voting_seconds']:.1f}", "both phases and the debate between"),
        ]
    )  # fmt: skip
    if not (counted_once and same_on_spectators == len(spectators) and fresh == stored and pushed_right == pushed_to):
        sys.exit(1)


if __name__ == "__main__":
    main()
