"""The `debate` and `export_transcript` commands, end to end against the test server."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from debates.models import Debate, Event
from tests.llm.smollm2 import free_port

pytestmark = pytest.mark.django_db(transaction=True)

SAMPLES = Path(__file__).resolve().parents[2] / "personas" / "samples"
DUEL = [
    "duel",
    "--topic",
    "Should cities ban private cars?",
    "--premise",
    "Cities should ban private cars",
    "--a",
    "Ada Sterling",
    "--b",
    "Marcus Vale",
    "--judge",
    "Judge Ines Okafor",
]


@pytest.fixture(autouse=True)
def personas():
    call_command("import_personas", str(SAMPLES), stdout=StringIO())


def run(*args):
    out = StringIO()
    call_command("debate", *args, stdout=out)
    return out.getvalue()


def test_a_duel_prints_header_private_thoughts_turns_scores_verdict_and_summary(llm_server):
    text = run(*DUEL)
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED
    assert "ChaosLM debate" in text and "Premise: Cities should ban private cars" in text
    assert "[private · Ada Sterling's mind] plan" in text
    assert "[private · Judge Ines Okafor's mind] evaluate" in text
    assert "Ada Sterling (for)" in text and "Marcus Vale (against)" in text
    assert text.count("⚖ score for") == 6
    assert "Verdict" in text and f"Winner: {debate.winner}" in text
    assert ("Premise UPHELD" if debate.premise_upheld else "Premise REJECTED") in text
    assert f"debate {debate.pk} completed · 30 LLM calls ·" in text
    # Every public statement appears whole in the output.
    for turn in Event.objects.filter(debate=debate, kind="TURN"):
        assert turn.content in text


def test_hide_private_leaves_plans_and_thoughts_out(llm_server):
    text = run(*DUEL, "--turns", "2", "--hide-private")
    assert "[private" not in text
    for event in Event.objects.filter(kind__in=["PLAN", "THINK"]):
        assert event.content not in text


def test_json_lines_print_every_event(llm_server):
    text = run(*DUEL, "--turns", "2", "--json")
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["ordinal"] for line in lines] == sorted(line["ordinal"] for line in lines) or len(lines) == 15
    assert len(lines) == 15
    assert {line["kind"] for line in lines} >= {"HEADER", "PLAN", "THINK", "TURN", "SCORE", "VERDICT"}
    assert lines[0]["kind"] == "HEADER" and lines[-1]["kind"] == "VERDICT"


def test_a_persona_can_be_a_yaml_file(llm_server, tmp_path):
    path = tmp_path / "zed.yaml"
    path.write_text("name: Zed\nrole: debater\npersonality: Zed argues from first principles.\n")
    run("duel", "--topic", "Tea or coffee?", "--turns", "1", "--a", str(path), "--b", "Marcus Vale")
    debate = Debate.objects.get()
    seat = debate.seats.get(key="a")
    assert seat.name == "Zed" and seat.persona is None
    assert llm_server.requests[0].system in (
        "Zed argues from first principles.",
        debate.seats.get(key="b").system_prompt,
    )


def test_failure_prints_the_error_and_how_to_resume_then_resume_completes(llm_server):
    llm_server.configure(rules=[{"match": "Now give your actual debate response", "fault": "500"}])
    with pytest.raises(SystemExit) as exit_info:
        run(*DUEL, "--turns", "4")
    assert exit_info.value.code == 1
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.ERROR
    llm_server.configure(rules=[])
    text = run("--resume", str(debate.pk))
    assert f"Resuming debate {debate.pk}" in text
    debate.refresh_from_db()
    assert debate.status == Debate.Status.COMPLETED


def test_an_embedded_model_that_cannot_start_keeps_the_debate_and_says_how_to_resume(settings, tmp_path):
    """With no endpoint configured the command starts the embedded model itself (no `serve` needed)."""
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_MODEL = str(tmp_path / "missing.gguf")
    settings.CHAOSLM_LOCAL_MODEL_PORT = free_port()
    with pytest.raises(CommandError) as refused:
        run(*DUEL, "--turns", "2")
    debate = Debate.objects.get()
    message = str(refused.value)
    assert message.startswith(f"CHAOSLM_LOCAL_MODEL names {tmp_path / 'missing.gguf'}, which does not exist. ")
    assert message.endswith(
        f"\nDebate {debate.pk} is saved: once a model answers, run it with "
        f"uv run python manage.py debate --resume {debate.pk}"
    )
    assert not debate.events.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("duel", "--topic", "x", "--a", "Nobody", "--b", "Marcus Vale"), "no persona is named 'Nobody' (known: "),
        (("duel", "--topic", "   ", "--a", "Ada Sterling", "--b", "Marcus Vale"), "at least one non-whitespace"),
        (
            ("duel", "--topic", "x", "--a", "Ada Sterling"),
            "The Debater B (against) seat is empty: fill it with --b PERSONA.",
        ),
        (("duel", "--topic", "x", "--a", "Ada Sterling", "--b", "Ada Sterling"), "Each seat needs a different persona"),
        (("duel", "--topic", "x", "--a", "Ada Sterling", "--b", "Marcus Vale", "--turns", "0"), "Turns must be from 1"),
        (("duel", "--topic", "x", "--a", "missing.yaml", "--b", "Marcus Vale"), "missing.yaml: no such persona file"),
        (
            ("duel", "--topic", "t" * 501, "--a", "Ada Sterling", "--b", "Marcus Vale"),
            "The topic may be at most 500 characters; this one is 501.",
        ),
        (("--resume", "999"), "there is no debate 999"),
        ((), "name a format"),
    ],
)
def test_bad_input_gets_a_message_not_a_traceback(args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        run(*args)
    assert not Debate.objects.exists()


def test_a_cards_empty_seat_names_the_flag_that_fills_it():
    call_command("import_formats", "cards/", verbosity=0)
    with pytest.raises(CommandError, match=r"^The Negative seat is empty: fill it with --seat neg=PERSONA\.$"):
        run("lincoln-douglas", "--topic", "Cars?", "--seat", "aff=Ada Sterling")
    assert not Debate.objects.exists()


def test_every_problem_with_seats_and_options_is_told_at_once():
    """As the form and the API refuse a debate (docs/cards.md): the seats' problems and the options' together, the
    command's own words for an empty seat (its flag) among them, and nothing made."""
    call_command("import_formats", "cards/", verbosity=0)
    with pytest.raises(CommandError) as refused:
        run("multi-agent-debate", "--topic", "Cars?", "--seat", "agent_1=Ada Sterling", "--option", "rounds=99")
    assert str(refused.value) == (
        "Rounds must be from 1 to 5.\nAgents is 3, so the Agent 2 and Agent 3 seats must be filled."
    )
    with pytest.raises(CommandError) as refused:
        run(
            "lincoln-douglas",
            "--topic",
            "Cars?",
            "--seat",
            "aff=Nobody",
            "--option",
            "questions=99",
            "--option",
            "bogus=1",
            "--option",
            "word_limit=many",
        )
    told = str(refused.value)
    for problem in (
        "option word_limit must be a whole number, not 'many'",
        "no persona is named 'Nobody'",
        "The Negative seat is empty: fill it with --seat neg=PERSONA.",
        "Cross-examination questions must be from 1 to 6.",
        "Douglas has no option called 'bogus'.",
    ):
        assert problem in told, problem
    assert "The Affirmative seat is empty" not in told  # its persona was named: its problem is that one
    assert not Debate.objects.exists()


def test_export_transcript(llm_server, tmp_path):
    run(*DUEL, "--turns", "2")
    debate = Debate.objects.get()
    out = StringIO()
    call_command("export_transcript", str(debate.pk), "--format", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["topic"] == "Should cities ban private cars?"
    assert len(data["events"]) == 15
    assert data["verdict"]["winner"] == debate.winner
    assert all("prompt" in event for event in data["events"])
    target = tmp_path / "t.md"
    # --public: what the share link exports. The thinking shows (the debate's default), no prompt does.
    call_command("export_transcript", str(debate.pk), "--output", str(target), "--public", stdout=StringIO())
    text = target.read_text()
    assert text.startswith("# Should cities ban private cars?") and "(private)" in text
    out = StringIO()
    call_command("export_transcript", str(debate.pk), "--format", "json", "--public", stdout=out)
    events = json.loads(out.getvalue())["events"]
    assert events and not any("prompt" in event for event in events)
    assert {"PLAN", "THINK"} <= {event["kind"] for event in events} and "INTERNAL" not in {e["kind"] for e in events}


def test_private_thinking_keeps_plans_and_thoughts_from_viewers(llm_server, tmp_path):
    run(*DUEL, "--turns", "2", "--private-thinking", "--visibility", "unlisted")
    debate = Debate.objects.get()
    assert debate.show_thinking is False
    target = tmp_path / "t.md"
    call_command("export_transcript", str(debate.pk), "--output", str(target), "--public", stdout=StringIO())
    text = target.read_text()
    assert "(private)" not in text and "### Ada Sterling" in text
    for event in Event.objects.filter(kind__in=["PLAN", "THINK"]):
        assert event.content not in text


FORMAT_RUNS = {
    "classic": (
        [
            "--seat",
            "moderator=Sam Reyes",
            "--seat",
            "pro=Ada Sterling",
            "--seat",
            "con=Marcus Vale",
            "--option",
            "free_turns=2",
        ],
        12,
    ),
    "standard": (
        [
            "--seat",
            "moderator=Sam Reyes",
            "--seat",
            "p1=Ada Sterling",
            "--seat",
            "p2=Marcus Vale",
            "--option",
            "max_turns=4",
        ],
        6,
    ),
    "custom": (
        [
            "--seat",
            "moderator=Sam Reyes",
            "--seat",
            "p1=Ada Sterling",
            "--seat",
            "p2=Marcus Vale",
            "--option",
            "max_rounds=2",
        ],
        6,
    ),
    "structured": (
        ["--seat", "affirmative=Ada Sterling", "--seat", "negative=Marcus Vale", "--option", "questions=1"],
        12,
    ),
    "panel": (
        [
            "--seat",
            "analyzer=Analyzer AI",
            "--seat",
            "solver=Solver AI",
            "--seat",
            "moderator=Moderator AI",
            "--option",
            "max_rounds=2",
        ],
        6,
    ),
}


@pytest.mark.parametrize("format_name", sorted(FORMAT_RUNS))
def test_every_format_runs_end_to_end_through_the_command(llm_server, format_name):
    args, calls = FORMAT_RUNS[format_name]
    text = run(format_name, "--topic", "Is remote work better?", *args)
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert len(llm_server.requests) == calls
    assert f"debate {debate.pk} completed · {calls} LLM calls" in text
    for event in Event.objects.filter(debate=debate, kind__in=["TURN", "SYSTEM"]):
        assert event.content in text


def test_a_human_seat_speaks_from_the_terminal(llm_server, monkeypatch):
    answers = iter(["", "Hybrid is best.", "Offices still matter."])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    text = run(
        "standard",
        "--topic",
        "Is remote work better?",
        "--seat",
        "p1=Ada Sterling",
        "--seat",
        "p2=Marcus Vale",
        "--seat",
        "human=human:Alex",
        "--option",
        "max_turns=6",
    )
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED
    assert "Your turn, Alex." in text and "Write something first." in text
    order = list(Event.objects.filter(debate=debate, kind__in=["TURN", "USER"]).values_list("seat__key", "content"))
    assert [seat for seat, _ in order] == ["p1", "p2", "human", "p1", "p2", "human"]
    assert [c for s, c in order if s == "human"] == ["Hybrid is best.", "Offices still matter."]


def test_end_debate_command_closes_an_interrupted_debate(llm_server):
    import asyncio

    from debates.engine import Observer, run_debate
    from debates.setup import SeatChoice, create_debate
    from personas.models import Persona

    class StopAt(Observer):
        async def event_saved(self, debate, event):
            if event.kind == "TURN" and event.seat and event.seat.key == "p2":
                raise asyncio.CancelledError  # what Ctrl-C does to the running debate

    seats = {
        k: SeatChoice(Persona.objects.get(name=n))
        for k, n in [("moderator", "Sam Reyes"), ("p1", "Ada Sterling"), ("p2", "Marcus Vale")]
    }
    debate = create_debate(format_name="custom", topic="Remote work", seats=seats, options={"max_rounds": 3})
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(run_debate(debate.pk, StopAt()))
    out = StringIO()
    call_command("end_debate", str(debate.pk), stdout=out)
    debate.refresh_from_db()
    assert debate.status == Debate.Status.COMPLETED
    last = Event.objects.filter(debate=debate).order_by("-ordinal")[:2]
    assert [e.kind for e in reversed(last)] == ["SYSTEM", "TURN"]
    assert last[1].content == "[SYSTEM]: Manual termination triggered. Moderator, please provide a final summary."
    assert last[0].seat.key == "moderator"


def test_a_debate_belongs_to_the_admin_by_default_and_prints_its_page_and_share_link(llm_server, django_user_model):
    admin = django_user_model.objects.create_superuser("admin", password="pw-admin-123")
    text = run(*DUEL, "--turns", "2", "--visibility", "unlisted")
    debate = Debate.objects.get()
    assert debate.owner == admin
    assert "Owner: admin (the default; --owner USERNAME gives it to another user)" in text
    assert f"Page: http://127.0.0.1:8000/debates/{debate.pk}/" in text
    assert f"Share link: http://127.0.0.1:8000/s/{debate.share_token}/" in text


def test_owner_names_who_it_belongs_to_and_an_unknown_one_is_refused(llm_server, django_user_model):
    carol = django_user_model.objects.create_user("carol", password="pw-carol-123")
    text = run(*DUEL, "--turns", "2", "--owner", "carol")
    assert Debate.objects.get().owner == carol and "Owner: carol" in text and "Share link" not in text
    with pytest.raises(CommandError, match="there is no user 'nobody' to own it"):
        run(*DUEL, "--owner", "nobody")
    assert Debate.objects.count() == 1
