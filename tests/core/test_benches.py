"""Every bench in bench/ runs at its smoke size and prints its table, so a bench that breaks fails the suite.

Benches are found, not listed: a new bench/X.py is picked up as soon as it exists (bench/_*.py are helpers, and
`BY_HAND` the benches run by hand).
No figure is judged here; timings belong to the full-size tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parents[2]
# bench/first_run.py times a fresh clone's install (every package downloaded): it has no smoke size, and is run
# by hand (docs/operations.md: A first run, timed).
BY_HAND = {"first_run.py"}
BENCHES = sorted(p.name for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_") and p.name not in BY_HAND)


def smoke(name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, f"bench/{name}", "--smoke"],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_benches_are_found():
    assert {"concurrency.py", "crowd.py", "duel_critical_path.py", "live_latency.py", "votes.py"} <= set(BENCHES)


@pytest.mark.parametrize("name", BENCHES)
def test_the_bench_runs_at_smoke_size_and_prints_its_table(name):
    run = smoke(name)
    assert run.returncode == 0, f"bench/{name} --smoke exited {run.returncode}:\n{run.stdout}\n{run.stderr[-4000:]}"
    lines = run.stdout.splitlines()
    header = next((i for i, line in enumerate(lines) if line.split()[:2] == ["figure", "value"]), None)
    assert header is not None, f"bench/{name} printed no table:\n{run.stdout}"
    assert set(lines[header + 1]) == {"-"}
    rows = [line for line in lines[header + 2 :] if line.strip()]
    assert rows, f"bench/{name} printed an empty table"
    # A part left out for want of PostgreSQL/Redis is fine on a laptop; CI has them, so there it is a failure.
    if IN_CI:
        assert not [row for row in rows if "left out" in row], f"bench/{name} left a part out under CI:\n{run.stdout}"
