"""docs/api.md's Python example runs as written against a running server and prints the verdict."""

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
    run = subprocess.run([sys.executable, "-c", example], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("started http") and "/debates/" in lines[0]
    assert any(line.startswith("[TURN] Ada Sterling: ") for line in lines)
    assert any(line.startswith("[VERDICT] ") for line in lines)
    assert re.match(r"winner: (Ada Sterling|Marcus Vale) \{", lines[-1]), lines[-1]
