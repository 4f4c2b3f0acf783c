"""Twenty debates on Celery workers over PostgreSQL and Redis under injected faults, the web read throughout.

Apart from tests/scaleout/test_celery.py so that `make test`'s xdist processes can run the two side by side.
"""

import time
from pathlib import Path

import httpx2 as httpx
import pytest

from tests.scaleout.test_celery import progress

pytestmark = pytest.mark.scaleout


def test_twenty_debates_under_faults_all_end_and_the_web_never_fails(stack, _llm_server_process):
    stack.env["CHAOSLM_LLM_TIMEOUT"] = "0.6"
    _llm_server_process.configure(
        latency=0.02,
        hang_seconds=5,
        seed=3,
        fault_rates={"500": 0.2, "hang": 0.1, "malformed_json": 0.1},
        # Which debates the random faults defeat depends on how the workers' calls interleave; one debate
        # whose every call fails is certain to end in an error.
        rules=[{"match": r"topic is: Soak 0\b", "fault": "500"}],
    )
    base = stack.start_web()
    for name in ("a", "b"):
        stack.start_worker(name, threads=6)
    ids = stack.enqueue_duels([f"Soak {i}" for i in range(20)], turns=2)
    statuses = []
    deadline = time.monotonic() + 240
    with httpx.Client(timeout=10) as client:
        while time.monotonic() < deadline:
            for debate_id in ids:
                for path in ("/", f"/debates/{debate_id}/", f"/debates/{debate_id}/export.json"):
                    response = client.get(base + path)
                    assert response.status_code == 200, (path, response.status_code)
            statuses = [progress(stack, i)[1] for i in ids]
            if all(s in ("completed", "error") for s in statuses):
                break
            time.sleep(0.5)
    assert all(s in ("completed", "error") for s in statuses), statuses
    folder = stack.env["CHAOSLM_TRANSCRIPTS_DIR"]
    for debate_id, status in zip(ids, statuses, strict=True):
        if status == "error":
            data = stack.transcript(debate_id)
            assert data["error"] and any(e["kind"] == "ERROR" for e in data["events"])
            assert (Path(folder) / f"partial-{debate_id}.md").exists()
    assert statuses[0] == "error"
    assert "completed" in statuses  # the retries held
