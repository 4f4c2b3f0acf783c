"""docs/api.md's Python example runs as written against a running server: it makes a tournament, follows its
events to the end, and prints the leaderboard."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.api.conftest import make_token

ROOT = Path(__file__).resolve().parents[2]


def test_the_guides_python_example_runs(server, llm):
    llm.configure(latency=0.0, reply_words=10)
    guide = (ROOT / "docs" / "api.md").read_text()
    example = re.search(r"## A Python example \(httpx\)\n\n```python\n(.*?)```", guide, re.S).group(1)
    env = {**os.environ, "CHAOSLM": server, "CHAOSLM_TOKEN": make_token(server, "olive", name="docs example")}
    run = subprocess.run([sys.executable, "-c", example], env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert re.match(r"started http://.+/tournaments/\d+/ \(4 debates\)$", lines[0]), lines[0]
    # Each of its four debates as it ends, and the progress after each.
    ended = [line for line in lines if line.startswith("[completed] ")]
    assert len(ended) == 4
    assert all(re.match(r"\[completed\] .+\?: (Ada Sterling|Marcus Vale)$", line) for line in ended), ended
    assert "4 of 4 done" in lines
    board = lines[lines.index("leaderboard:") + 1 :]
    assert [re.match(r"([12])\. (Ada Sterling|Marcus Vale): ", line).groups() for line in board] in (
        [("1", "Ada Sterling"), ("2", "Marcus Vale")],
        [("1", "Marcus Vale"), ("2", "Ada Sterling")],
    )
