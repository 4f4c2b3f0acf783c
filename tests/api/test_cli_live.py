"""A debate run by `manage.py debate` streams to the browser on the embedded defaults (the in-memory channel
layer): its pushes reach the web server's sockets through the server's relay, so a client watching sees its
tokens as they are written, not only the saved events at a reload."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

from tests.api.conftest import ROOT, api, make_token
from tests.api.test_debates import read_sse


def test_a_command_line_debates_tokens_reach_a_client_watching_it(server, api_env, llm):
    # Slow enough that the client is watching before its statements are written.
    llm.configure(latency=1.0, token_rate=30, reply_words=12)
    database = api_env["DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(database) as connection:
        before = connection.execute("SELECT coalesce(max(id), 0) FROM debates_debate").fetchone()[0]
    command = subprocess.Popen(
        [sys.executable, "manage.py", "debate", "duel", "--topic", "Should cities ban cars?", "--a", "Ada Sterling",
         "--b", "Marcus Vale", "--turns", "2", "--owner", "olive"],
        cwd=ROOT, env=api_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            with sqlite3.connect(database) as connection:
                found = connection.execute("SELECT max(id) FROM debates_debate WHERE id > ?", (before,)).fetchone()[0]
            if found:
                break
            assert time.monotonic() < deadline, "the command made no debate"
            time.sleep(0.1)
        with (
            api(server, make_token(server, "olive")) as client,
            client.stream("GET", f"/debates/{found}/events", params={"tokens": 1}, timeout=120) as reply,
        ):
            items = list(read_sse(reply))
    finally:
        _, err = command.communicate(timeout=120)
    assert command.returncode == 0, err
    written: dict[int, str] = {}
    for kind, _, data in items:
        if kind == "reset":
            written[data["ordinal"]] = ""
        elif kind == "token":
            written[data["ordinal"]] = written.get(data["ordinal"], "") + data["text"]
    saved = {data["ordinal"]: data for kind, _, data in items if kind == "event"}
    turns = [ordinal for ordinal, event in saved.items() if event["kind"] == "TURN"]
    assert len(turns) == 2
    # Each statement's tokens came live from the command, and add up to what was saved (the first may have begun
    # before the client came: its tail).
    assert all(written.get(o) and saved[o]["content"].endswith(written[o]) for o in turns)
    assert written[turns[-1]] == saved[turns[-1]]["content"]
