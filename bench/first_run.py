"""A newcomer's first minutes, timed: from a fresh clone with an empty package cache, the time to the first page
of `make run` and to the first finished default debate (the duel at the new-debate form's defaults for the
embedded model, run with `manage.py debate` beside the running site). Goals on two cores: two and five minutes.

Not in `make test` (it downloads every package, a few hundred megabytes); docs/operations.md: "A first run,
timed". It clones the committed HEAD of this checkout into a temporary folder, with a uv cache of its own.

    uv run python bench/first_run.py [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import ROOT, free_port, print_table

PAGE_GOAL, DEBATE_GOAL = 120.0, 300.0


def page_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", action="store_true", help="leave the clone and its cache behind")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="chaoslm-first-run-"))
    clone, cache = folder / "chaoslm", folder / "uv-cache"
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "OPENAI_BASE_URL")}
    env.update(
        {
            "UV_CACHE_DIR": str(cache),
            "OPENAI_API_KEY": "",
            "CHAOSLM_LOCAL_MODEL_PORT": str(free_port()),
            "DATABASE_URL": f"sqlite:///{folder}/first.sqlite3",
        }
    )
    started = time.monotonic()
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    url = f"http://127.0.0.1:{port}/"
    log = (folder / "make-run.log").open("w")
    run = subprocess.Popen(  # its own process group: make, uv and the server are stopped together
        ["make", "run", f"ADDR=127.0.0.1:{port}"],
        cwd=clone,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        while not page_answers(url):
            if run.poll() is not None:
                raise SystemExit(f"make run exited ({run.returncode}); its output: {log.name}")
            time.sleep(0.5)
        page = time.monotonic() - started
        duel = [
            "uv", "run", "python", "manage.py", "debate", "duel", "--topic", "Should cities ban private cars?",
            "--premise", "Cities should ban private cars", "--turns", "2", "--word-limit", "60",
            "--a", "Ada Sterling", "--b", "Marcus Vale", "--judge", "Judge Ines Okafor",
        ]  # fmt: skip
        subprocess.run(duel, cwd=clone, env=env, check=True, stdout=subprocess.DEVNULL)
        debate = time.monotonic() - started
    finally:
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
        log.close()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print_table(
        [
            ("clone to first page", f"{page:.0f} s", f"goal <= {PAGE_GOAL:.0f} s"),
            ("clone to first finished default duel", f"{debate:.0f} s", f"goal <= {DEBATE_GOAL:.0f} s"),
            ("first page to finished duel", f"{debate - page:.0f} s", "goal <= 180 s"),
        ]
    )


if __name__ == "__main__":
    main()
