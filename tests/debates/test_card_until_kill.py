"""A card's stop condition through the real engine: the `debate` command (a real subprocess) runs a card whose
repeat stops when three answers given at once agree, against the scripted test server. The answers disagree in
round 1 and agree in round 2, so the debate stops there and no round-3 request ever reaches the server; a run
SIGKILLed while round 2's calls are in flight, then resumed with `debate --resume ID`, ends with the events of an
uninterrupted run, no ordinal twice and still no round-3 call (docs/cards.md, "until: a repeat that stops
early")."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys

import pytest

from tests.debates.test_restart import rows, site_env, wait_for
from tests.servers import ROOT, manage

CARD = """\
name: agree-at-once
title: Agree at once
seats:
  - {key: a, role: debater, label: A}
  - {key: b, role: debater, label: B}
  - {key: c, role: debater, label: C}
stages:
  - repeat: 4
    until: {agree: all}
    stages:
      - speech: answer
        seat: [a, b, c]
        at_once: true
        answer: number
        prompt: "Round {round}, {speaker}. The others said: {others_answer} {answer_format}"
        first: {prompt: "Round 1, {speaker}. {answer_format}"}
decision: {rule: plurality}
"""

SEATS = {"a": "Ada Sterling", "b": "Marcus Vale", "c": "Priya Raman"}
TOPIC = "What is 7 times 6?"


def answer(value: int, why: str) -> str:
    return json.dumps({"reasoning": why, "answer": value})


# Round 1: 41, 42, 42 (they disagree); round 2 and after: 42 from everyone (they agree).
RULES = [
    {"match": r"^Round 1, Ada Sterling\.", "reply": answer(41, "Seven sixes, less one.")},
    {"match": r"^Round 1, ", "reply": answer(42, "Seven sixes.")},
    {"match": r"^Round \d, ", "reply": answer(42, "The others agree: seven sixes.")},
]


@pytest.fixture(scope="session")
def card_site(tmp_path_factory, _llm_server_process):
    """A migrated database with the sample personas, an owner and the card: made once, copied for each test."""
    folder = tmp_path_factory.mktemp("until-site")
    env = site_env(folder / "site.sqlite3", _llm_server_process.url, folder)
    manage(env, "migrate", "--noinput")
    manage(env, "import_personas", "personas/samples/")
    (folder / "agree-at-once.yaml").write_text(CARD)
    manage(env, "import_formats", str(folder / "agree-at-once.yaml"))
    manage(env, "shell", "-c", "from django.contrib.auth.models import User; User.objects.create_user('rhea')")
    return folder / "site.sqlite3"


@pytest.fixture
def site(card_site, tmp_path, _llm_server_process):
    _llm_server_process.reset()
    _llm_server_process.configure(rules=RULES)
    database = tmp_path / "site.sqlite3"
    shutil.copyfile(card_site, database)
    return site_env(database, _llm_server_process.url, tmp_path), database


def debate_command(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    seats = [f"--seat={key}={name}" for key, name in SEATS.items()]
    return subprocess.Popen(
        [sys.executable, "manage.py", "debate", *args, *(() if "--resume" in args else seats)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start(env: dict[str, str]) -> subprocess.Popen[str]:
    return debate_command(env, "agree-at-once", "--topic", TOPIC, "--owner", "rhea", "--no-poll")


def finish(command: subprocess.Popen[str]) -> str:
    out, err = command.communicate(timeout=120)
    assert command.returncode == 0, f"{out}\n{err}"
    return out


def rounds_asked(server) -> list[int]:
    """The round of every answer request that reached the server, in arrival order."""
    asked = [r.last_user for r in server.requests]
    assert all(text.startswith("Round ") for text in asked), asked  # nothing but the card's answers was asked
    return [int(text.split(",")[0].removeprefix("Round ")) for text in asked]


def events(database, debate_id: int) -> list[tuple]:
    """The debate's events as a reader sees them: ordinal, kind, step, seat, prompt, content, data."""
    return rows(
        database,
        "SELECT e.ordinal, e.kind, e.step, s.key, e.prompt, e.content, e.data FROM debates_event e "
        "LEFT JOIN debates_seat s ON s.id = e.seat_id WHERE e.debate_id = ? ORDER BY e.ordinal",
        debate_id,
    )


def only_debate(database) -> tuple[int, str]:
    ((debate_id, status),) = rows(database, "SELECT id, status FROM debates_debate")
    return debate_id, status


@pytest.fixture(scope="module")
def whole(card_site, tmp_path_factory, _llm_server_process):
    """The debate run to its end, never killed, on a database of its own: the rounds it asked, in arrival order,
    its events and its output."""
    server = _llm_server_process
    server.reset()
    server.configure(rules=RULES)
    folder = tmp_path_factory.mktemp("uninterrupted")
    database = folder / "site.sqlite3"
    shutil.copyfile(card_site, database)
    out = finish(start(site_env(database, server.url, folder)))
    debate_id, status = only_debate(database)
    assert status == "completed"
    return rounds_asked(server), events(database, debate_id), out


def test_the_rounds_stop_at_the_first_that_agrees_and_nothing_past_it_is_asked(whole):
    asked, stored, out = whole
    # Three answers at once in round 1, three in round 2; round 3 (and 4) never reached the server.
    assert sorted(asked) == [1, 1, 1, 2, 2, 2]
    answers = [
        (seat, json.loads(data)["round"], json.loads(data)["answer"])
        for _, _, step, seat, _, _, data in stored
        if step == "answer"
    ]
    assert answers == [
        ("a", 1, 41), ("b", 1, 42), ("c", 1, 42), ("a", 2, 42), ("b", 2, 42), ("c", 2, 42),
    ]  # fmt: skip
    lines = {step: content for _, _, step, _, _, content, _ in stored if step in ("stop", "decision")}
    assert lines == {
        "stop": "3 of 3 answers agree after round 2 of 4 (42): the rounds stop.",
        "decision": "Decision by plurality vote: 42 (3 votes of 3 voters). 42: 3",
    }
    assert [step for _, _, step, *_ in stored][-2:] == ["stop", "decision"]
    # Round 2's prompts read the others' round-1 answers, with their names.
    prompt = next(p for _, _, _, seat, p, _, data in stored if seat == "a" and json.loads(data).get("round") == 2)
    assert "Marcus Vale: Seven sixes.\n\nAnswer: 42" in prompt and "Answer: 41" not in prompt
    assert "Decision by plurality vote: 42" in out


@pytest.mark.parametrize("in_flight", ["all three", "one"])
def test_a_run_killed_mid_round_resumes_to_the_uninterrupted_events_and_never_asks_round_3(
    whole, site, _llm_server_process, in_flight
):
    env, database = site
    server = _llm_server_process
    if in_flight == "all three":
        # Every call takes 3 s: the kill lands while round 2's three calls wait on the server.
        server.configure(rules=RULES, latency=3.0)
    else:
        # Ada's round-2 call hangs; the other two land first.
        server.configure(rules=[{"match": r"^Round 2, Ada Sterling\.", "fault": "hang", "times": 1}, *RULES])
    command = start(env)
    try:
        round_2 = lambda: [r for r in server.requests if r.last_user.startswith("Round 2, ")]  # noqa: E731
        stored_2 = "SELECT count(*) FROM debates_event WHERE step = 'answer' AND data LIKE '%\"round\": 2%'"
        if in_flight == "all three":
            wait_for(lambda: len(round_2()) == 3, 60, "round 2 was never asked")
            assert rows(database, stored_2) == [(0,)]
        else:
            wait_for(lambda: rows(database, stored_2) == [(2,)], 60, "round 2's other answers never landed")
        assert [r.finished for r in round_2() if r.last_user.startswith("Round 2, Ada")] == [None]  # in flight
    finally:
        command.send_signal(signal.SIGKILL)
        command.communicate(timeout=30)
    debate_id, status = only_debate(database)
    assert status == "running"  # as the killed process left it
    before = len(server.requests)
    server.configure(rules=RULES, latency=0.0)
    out = finish(debate_command(env, "--resume", str(debate_id)))
    assert f"Resuming debate {debate_id}" in out
    assert only_debate(database) == (debate_id, "completed")
    resumed = events(database, debate_id)
    ordinals = [ordinal for ordinal, *_ in resumed]
    assert len(ordinals) == len(set(ordinals))
    # The same events as the run never killed: ordinals, kinds, steps, seats, prompts, contents and data.
    assert resumed == whole[1]
    # The resumed run asked only what round 2 still lacked, and nobody ever asked round 3.
    again = rounds_asked(server)[before:]
    assert again == ([2, 2, 2] if in_flight == "all three" else [2])
    assert 3 not in rounds_asked(server)
