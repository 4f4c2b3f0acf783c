"""End to end against the real embedded SmolLM2-135M model, served by llama.cpp. Slow; runs in CI."""

import asyncio
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import call_command

from chaoslm.llm import Callbacks, ChatOptions, Endpoint, Policy, chat, local_model
from chaoslm.personas.models import default_endpoint
from debates.models import Debate, Event
from tests.llm.smollm2 import SHORT, free_port, require_smollm2

pytestmark = pytest.mark.slow


def test_smollm2_answers_in_text_and_in_schema_constrained_json(local_endpoint):
    policy = Policy(timeout=120)
    result = asyncio.run(
        chat(local_endpoint, [{"role": "user", "content": "Name a colour."}], ChatOptions(max_tokens=30), policy=policy)
    )
    assert result.text.strip()
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}, "reasoning": {"type": "string"}},
        "required": ["score", "reasoning"],
    }
    prompt = 'Score this argument out of 10: "Cats are better than dogs." Respond with {"score": 7, "reasoning": "..."}'
    result = asyncio.run(
        chat(
            local_endpoint,
            [{"role": "user", "content": prompt}],
            ChatOptions(max_tokens=80, json_schema=schema),
            policy=policy,
        )
    )
    assert 0 <= result.data["score"] <= 10 and isinstance(result.data["reasoning"], str)


def test_a_gguf_named_by_path_is_served_in_its_place_under_its_own_name(settings, tmp_path):
    """CHAOSLM_LOCAL_MODEL as a path, with the shipped file standing in for a better model of one's own."""
    require_smollm2()
    own = tmp_path / "Tiny-Chat.Q4_1.gguf"
    own.symlink_to(local_model.model_path())
    settings.CHAOSLM_LOCAL_MODEL = str(own)
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_MODEL_PORT = free_port()
    assert str(own) in local_model.command()
    process = local_model.start(wait=120)
    try:
        endpoint = default_endpoint()
        messages = [{"role": "user", "content": "Name a colour."}]
        result = asyncio.run(chat(endpoint, messages, ChatOptions(max_tokens=20), policy=Policy(timeout=120)))
    finally:
        process.terminate()
        process.wait(10)
        local_model.log_path().unlink(missing_ok=True)
    assert (endpoint.name, endpoint.model) == ("local Tiny-Chat.Q4_1.gguf", "tiny-chat.q4_1")
    assert result.model == "tiny-chat.q4_1" and result.text.strip()


@pytest.mark.django_db(transaction=True)
def test_a_duel_on_smollm2_reaches_a_verdict_through_the_command(local_endpoint, settings, tmp_path):
    settings.CHAOSLM_LLM_TIMEOUT = 120
    out = StringIO()
    call_command("import_personas", "personas/", stdout=StringIO())
    call_command(
        "debate",
        "duel",
        "--topic",
        "Should homework be banned?",
        "--premise",
        "Homework should be banned",
        "--turns",
        "2",
        "--word-limit",
        "60",
        "--a",
        "Ada Sterling",
        "--b",
        "Marcus Vale",
        "--judge",
        "Judge Ines Okafor",
        stdout=out,
    )
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert debate.winner in ("Ada Sterling", "Marcus Vale")
    assert Event.objects.filter(debate=debate, kind="VERDICT").exists()
    text = out.getvalue()
    assert "Verdict" in text and f"Winner: {debate.winner}" in text
    assert "14 LLM calls" in text


FORMAT_RUNS = {
    "classic": (["--seat", "moderator=Mod", "--seat", "pro=Pat", "--seat", "con=Cy", "--option", "free_turns=1"]),
    "standard": (["--seat", "moderator=Mod", "--seat", "p1=Pat", "--seat", "p2=Cy", "--option", "max_turns=2"]),
    "custom": (["--seat", "moderator=Mod", "--seat", "p1=Pat", "--seat", "p2=Cy", "--option", "max_rounds=1"]),
    "structured": (["--seat", "affirmative=Pat", "--seat", "negative=Cy", "--option", "questions=1"]),
    "panel": (
        ["--seat", "analyzer=Ana", "--seat", "solver=Sol", "--seat", "moderator=Mod", "--option", "max_rounds=1"]
    ),
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("format_name", sorted(FORMAT_RUNS))
def test_every_other_format_completes_on_smollm2(local_endpoint, settings, format_name):
    from chaoslm.personas.models import import_personas

    settings.CHAOSLM_LLM_TIMEOUT = 120
    import_personas(
        [
            (f"{name}.yaml", SHORT.format(name=name, role=role))
            for name, role in [
                ("Mod", "moderator"),
                ("Pat", "debater"),
                ("Cy", "debater"),
                ("Ana", "analyzer"),
                ("Sol", "solver"),
            ]
        ]
    )
    call_command(
        "debate", format_name, "--topic", "Should schools start later?", *FORMAT_RUNS[format_name], stdout=StringIO()
    )
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    turns = Event.objects.filter(debate=debate, kind="TURN")
    assert turns.exists() and all(t.content.strip() and t.model == local_model.MODEL_ALIAS for t in turns)


# One busy-loop process per core (CI has two), beside the model's two threads: a laptop busy with other work.
HOGS = 2
PERSONA = "name: {name}\nrole: {role}\npersonality: You are {name}. {style}\nmax_tokens: {max_tokens}\n"


@pytest.fixture
def cpu_hog():
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS)]
    yield
    for hog in hogs:
        hog.kill()
        hog.wait()


def starved_speed(endpoint: Endpoint) -> tuple[float, float]:
    """The model's speed under the hog: (seconds to its first token for a ~400-token prompt, tokens a second)."""
    paces: list[float] = []
    prompt = [{"role": "user", "content": "Summarise this. " + "The debate is about school hours. " * 50}]
    options = ChatOptions(max_tokens=60)
    callbacks = Callbacks(on_pace=paces.append)
    result = asyncio.run(chat(endpoint, prompt, options, policy=Policy(timeout=120), callbacks=callbacks))
    writing = result.latency_ms / 1000
    rate = paces[-1] if paces else result.completion_tokens / writing
    return max(0.1, writing - result.completion_tokens / rate), rate


@pytest.mark.starves_cpu
@pytest.mark.django_db(transaction=True)
def test_a_duel_on_a_cpu_starved_smollm2_is_slow_but_completes(local_endpoint, settings, cpu_hog):
    """Issue 26.1: on the embedded model the timeout measures silence. One debater is asked for long replies
    (2.5 timeouts' worth of tokens at the pace measured, from 40 to 120): asked for whole, such a reply outlasted
    the timeout and its retry ("did not answer within 3s, nor within 4.5s on a second try"); streamed, none is
    silent that long, and the duel completes. One long-winded debater and a cap, not two and 400 tokens: a
    measured pace can be far off under the hog (a burst of chunks late), and CI once spent 15 minutes here."""
    from chaoslm.personas.models import default_endpoint, import_personas

    first_token, rate = starved_speed(default_endpoint())
    # Room for the machine to get busier than when it was measured (CI runs other SmolLM2 tests beside this one:
    # a 3 s timeout once met a 3 s silence there, then 4.5 s on the retry).
    timeout = max(4.0, round(3 * first_token, 1))
    settings.CHAOSLM_LLM_TIMEOUT = timeout
    long_tokens = min(120, max(40, int(2.5 * timeout * rate)))
    long = {"style": "Answer at length, in three full paragraphs.", "max_tokens": long_tokens}
    short = {"style": "Answer in two short sentences.", "max_tokens": 120}
    import_personas(
        [
            ("Pat.yaml", PERSONA.format(name="Pat", role="debater", **long)),
            ("Cy.yaml", PERSONA.format(name="Cy", role="debater", **short)),
            ("Jo.yaml", PERSONA.format(name="Jo", role="judge", **short)),
        ]
    )
    call_command(
        "debate", "duel", "--topic", "Should schools start later?", "--turns", "1", "--a", "Pat", "--b", "Cy",
        "--judge", "Jo", stdout=StringIO(),
    )  # fmt: skip
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert debate.winner in ("Pat", "Cy")
    # The premise: a reply took longer to write than the timeout and its retry together allowed.
    slowest = max(Event.objects.filter(debate=debate, kind__in=["PLAN", "TURN"]).values_list("latency_ms", flat=True))
    assert slowest > timeout * 1.5 * 1000, (timeout, rate, slowest)
