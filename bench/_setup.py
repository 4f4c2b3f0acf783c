"""Shared setup for benchmarks: a throwaway SQLite database, the sample personas, the test server."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_test_server(
    latency: float, token_rate: float = 0.0, reply_words: int = 40, *extra: str
) -> tuple[subprocess.Popen[bytes], str]:
    """The test server in its own process, so its CPU time is not counted as orchestration."""
    port = free_port()
    # Run by path, not with -m: the chaoslm.llm package would import the openai client first (a second of CPU).
    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "chaoslm" / "llm" / "testserver.py"),
            "--port",
            str(port),
            "--latency",
            str(latency),
            "--token-rate",
            str(token_rate),
            "--reply-words",
            str(reply_words),
            *extra,
        ],
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, url
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the test server did not start")


# Measure what a deployment runs: DEBUG keeps every SQL statement and formats its parameters.
# Benches talk plain HTTP on loopback, so the two HTTPS-only settings are off (their documented
# variables): a secure CSRF cookie is never sent back over HTTP, and every form post would get 403.
PRODUCTION_LIKE = {
    "CHAOSLM_DEBUG": "0",
    "CHAOSLM_SECRET_KEY": "bench-" + "x" * 50,
    "CHAOSLM_SSL_REDIRECT": "0",
    "CHAOSLM_SECURE_COOKIES": "0",
}


def django_with_temp_db(llm_url: str) -> None:
    folder = tempfile.mkdtemp(prefix="chaoslm-bench-")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ["OPENAI_BASE_URL"] = llm_url
    os.environ["OPENAI_API_KEY"] = "bench"
    os.environ["CHAOSLM_DEFAULT_MODEL"] = "bench-model"
    os.environ["CHAOSLM_TRANSCRIPTS_DIR"] = folder
    os.environ.update(PRODUCTION_LIKE)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("import_personas", str(ROOT / "personas" / "samples"), verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115


def new_duel(turns: int = 6):
    from debates.setup import SeatChoice, create_debate
    from personas.models import Persona

    def seat(name: str) -> SeatChoice:
        return SeatChoice(persona=Persona.objects.get(name=name))

    return create_debate(
        format_name="duel",
        topic="Should cities ban private cars?",
        premise="Cities should ban private cars",
        seats={"a": seat("Ada Sterling"), "b": seat("Marcus Vale"), "judge": seat("Judge Ines Okafor")},
        options={"turns": turns},
    )


CHAT_PERSONA = "name: {n}\nrole: chat\npersonality: You are {n}, and you like to talk.\n"
ROOM_TEXT = "A message with **some** markdown, a [link](https://example.org) and a few words more: {i}."


def room_with_history(history: int) -> tuple[Any, list[Any], list[Any]]:
    """A public room of three chat personas that has said `history` messages (ROOM_TEXT), its agents in turn:
    the room, its agents and those messages, oldest first."""
    from django.contrib.auth import get_user_model

    from personas.models import Persona, import_personas
    from rooms import services
    from rooms.models import RoomMessage

    names = ["Ana", "Ben", "Cy"]
    if not Persona.objects.filter(name="Ana").exists():
        import_personas([(f"{n}.yaml", CHAT_PERSONA.format(n=n)) for n in names])
    owner, _ = get_user_model().objects.get_or_create(username="bench")
    room = services.create_room(owner, f"Room of {history}", "public", Persona.objects.filter(name__in=names))
    agents = list(room.agents.all())
    said = RoomMessage.objects.bulk_create(
        RoomMessage(
            room=room, kind="agent", agent=agents[i % 3], author=agents[i % 3].name, content=ROOM_TEXT.format(i=i)
        )
        for i in range(history)
    )
    return room, agents, said


def parse_args(parser: argparse.ArgumentParser, smoke: dict[str, Any]) -> argparse.Namespace:
    """The bench's arguments, with `--smoke`: the sizes in `smoke`, so every code path runs in seconds.

    The test suite runs each bench this way (tests/core/test_benches.py): a bench that breaks fails CI.
    Its figures mean nothing at that size; only the full-size tables do.
    """
    sizes = ", ".join(f"--{name.replace('_', '-')} {value}" for name, value in smoke.items())
    parser.add_argument("--smoke", action="store_true", help=f"a tiny run of every code path ({sizes})")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(smoke)
    return args


def print_table(rows: list[tuple[str, str, str]]) -> None:
    """Print benchmark figures as an aligned table: figure, value, note (a target, say)."""
    width = max(len(row[0]) for row in rows)
    print(f"{'figure':<{width}}  {'value':>12}  note")
    print("-" * (width + 34))
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>12}  {note}")
