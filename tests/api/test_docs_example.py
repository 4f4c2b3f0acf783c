"""docs/api.md's examples run as written against a running server. The Python one makes a tournament (its personas
looked up by name), follows its events to the end printing progress only when it changes, backs off while the
server cannot be reached and resumes where it was, and prints the leaderboard with two decimals. The curl one
seats personas looked up by name with jq, follows the debate and a tournament, and fetches their exports."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.api.conftest import make_token
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "api.md").read_text()
PYTHON = re.search(r"## A Python example \(httpx\)\n\n```python\n(.*?)```", GUIDE, re.S).group(1)
CURL = re.search(r"## With curl\n.*?```sh\n(.*?)```", GUIDE, re.S).group(1)
FOLLOW = re.search(r"### Reconnecting after a restart\n.*?```sh\n(.*?)```", GUIDE, re.S).group(1)
NUMBER = r"-?\d+\.\d\d"  # two decimals, as the pages show a rating
RATING = (
    rf"([12])\. (Ada Sterling|Marcus Vale): {NUMBER} \((95% interval {NUMBER} to {NUMBER}|no interval yet: .+)\), "
    r"\d+ won, \d+ lost$"
)


class Outage:
    """A TCP relay to the server that can play dead: while down, it cuts every connection it has and closes each
    new one at once (a server restarting), counting them, so a client's reconnects can be counted."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.target = (parts.hostname, parts.port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.down = False
        self.refused = 0
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.down:
                    self.refused += 1
                    client.close()
                    continue
                upstream = socket.create_connection(self.target)
                self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def set_down(self, down: bool) -> None:
        with self.lock:
            self.down = down
            if down:
                for s in self.open:
                    with contextlib.suppress(OSError):
                        s.shutdown(socket.SHUT_RDWR)
                self.open = []

    def close(self) -> None:
        self.listener.close()


def test_the_guides_python_example_runs_backs_off_while_the_server_is_down_and_resumes(server, llm):
    llm.configure(latency=0.05, reply_words=10)
    relay = Outage(server)
    env = {**os.environ, "CHAOSLM": relay.url, "CHAOSLM_TOKEN": make_token(server, "olive", name="docs example")}
    run = subprocess.Popen(
        [sys.executable, "-u", "-c", PYTHON], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        first = run.stdout.readline()
        assert re.match(r"started http://.+/tournaments/\d+/ \(4 debates\)$", first), first + run.stderr.read()
        # The server goes away for 6 seconds: a client backing off 1, 2, 4 s tries twice meanwhile, not thousands.
        relay.set_down(True)
        time.sleep(6)
        relay.set_down(False)
        out, err = run.communicate(timeout=180)
    finally:
        run.kill()
        relay.close()
    assert run.returncode == 0, err
    assert 2 <= relay.refused <= 3, relay.refused
    lines = [first.rstrip("\n"), *out.splitlines()]
    waits = [re.match(r"reconnecting in (\d+) s", line).group(1) for line in lines if line.startswith("reconnecting")]
    assert waits[:3] == ["1", "2", "4"], lines
    # Each of its four debates once as it ends (resumed after the outage with Last-Event-ID), and the progress
    # only as it changes: 0 to 4 done, each once at most.
    ended = [line for line in lines if line.startswith("[completed] ")]
    assert len(ended) == 4, ended
    assert all(re.match(r"\[completed\] .+\?: (Ada Sterling|Marcus Vale)$", line) for line in ended), ended
    progress = [line for line in lines if re.match(r"\d of 4 done", line)]
    assert progress[-1] == "4 of 4 done" and len(progress) == len({p[:1] for p in progress}) <= 5, progress
    board = lines[lines.index("leaderboard:") + 1 :]
    assert len(board) == 2 and all(re.match(RATING, line) for line in board), board
    assert {re.match(RATING, line).group(2) for line in board} == {"Ada Sterling", "Marcus Vale"}


def test_the_guides_curl_example_runs(server, llm, tmp_path):
    require(shutil.which("jq") and shutil.which("curl"), "jq and curl")
    llm.configure(latency=0.0, reply_words=10)
    script = "\n".join(line for line in CURL.splitlines() if not line.startswith("export "))
    env = {**os.environ, "CHAOSLM": server, "TOKEN": make_token(server, "olive", name="curl example")}
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert re.search(r"^\d+  judge  Judge Ines Okafor$", out, re.M)
    # The debate followed live to its end, then again after event 9 to its end; the tournament's stream likewise.
    assert out.count('event: end\ndata: {"status": "completed"}') == 3, out
    assert "Should cities ban private cars?" in out and "event: token" in out
    ratings = re.findall(r'^\{"name":"(Ada Sterling|Marcus Vale)","rating":', out, re.M)
    assert sorted(ratings) == ["Ada Sterling", "Marcus Vale"]
    (saved,) = tmp_path.glob("tournament-*-ratings.csv")  # named as the server names it (-J)
    assert saved.read_text().startswith("rank,name,rating,ci_low,ci_high")


def test_the_guides_curl_loop_follows_a_stream_across_a_restart_missing_nothing(server, llm, tmp_path):
    require(shutil.which("curl"), "curl")
    llm.configure(latency=0.3, reply_words=10)
    token = make_token(server, "olive", name="curl follow")
    body = {
        "name": "Followed",
        "debaters": ["Ada Sterling", "Marcus Vale"],
        "judges": ["Judge Ines Okafor"],
        "questions": ["Should cities ban private cars?"],
        "options": {"turns": 2},
        "concurrency": 1,  # one debate after another: the outage falls between two ends
    }
    api = httpx.Client(base_url=server + "/api/v1", headers={"Authorization": f"Bearer {token}"})
    tournament = api.post("/tournaments", json=body).json()["id"]
    relay = Outage(server)
    env = {**os.environ, "CHAOSLM": relay.url, "TOKEN": token, "tournament": str(tournament)}
    script = 'auth="Authorization: Bearer $TOKEN"\n' + FOLLOW
    run = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", script], env=env, cwd=tmp_path, stdout=subprocess.PIPE, text=True
    )
    try:
        seen = []
        while not any(line.startswith("event: debate") for line in seen):
            seen.append(run.stdout.readline())
            assert seen[-1], "the stream ended before a debate did"
        # The server goes away for five seconds mid-stream, as a restart does.
        relay.set_down(True)
        time.sleep(5)
        relay.set_down(False)
        out, _ = run.communicate(timeout=180)
    finally:
        run.kill()
        relay.close()
    assert run.returncode == 0
    assert relay.refused >= 1  # it tried again while the server was away, every two seconds, not in a tight loop
    assert relay.refused <= 4, relay.refused
    lines = "".join(seen).splitlines() + out.splitlines()
    # Each of its debates' ends once, in order, across the connections, and one end.
    total = api.get(f"/tournaments/{tournament}").json()["progress"]["total"]
    api.close()
    assert total >= 2
    assert [line for line in lines if line.startswith("id: ")] == [f"id: {n}" for n in range(1, total + 1)], lines
    assert lines.count("event: end") == 1


def test_the_old_curl_example_s_mistake_is_named(server):
    """The guide's old example seated persona 2 wherever it was: a persona of another role is refused by name."""
    seat = "b"
    token = make_token(server, "olive", name="seat check")
    with httpx.Client(base_url=server + "/api/v1", headers={"Authorization": f"Bearer {token}"}) as client:
        judge = next(p for p in client.get("/personas").json() if p["role"] == "judge")
        reply = client.post("/debates", json={"topic": "Tea?", "seats": {"a": judge["id"], seat: judge["id"]}})
    assert reply.status_code == 422
    messages = {e["field"]: e["message"] for e in reply.json()["errors"]}
    assert (
        messages[f"seats.{seat}"]
        == f"Persona {judge['id']} ({judge['name']}) is a judge; seat '{seat}' takes a debater."
    )
