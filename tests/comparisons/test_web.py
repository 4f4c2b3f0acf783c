"""A comparison through the API and the page: created over `POST /api/v1/comparisons`, run on the inline runner
against the scripted test server, read through the kind registry's `/batches/comparison/...`, its report JSON
checked against an independent recount of the stored runs, its page and exports; the form's and the API's refusals
with every problem listed."""

from __future__ import annotations

import csv
import io
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from api import tokens
from chaoslm.runner import inline
from comparisons import broadcast
from comparisons.arithmetic import generate
from comparisons.kind import COMPARISON
from comparisons.models import Comparison, Run
from debates.models import Debate, Event
from tests.batches.helpers import debater
from tests.comparisons.helpers import answer_rules, import_shipped_cards, recompute

pytestmark = pytest.mark.django_db(transaction=True)
API = "/api/v1"


def settle(comparison_id: int, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not COMPARISON.is_settled(comparison_id):
        assert time.monotonic() < deadline, "the comparison did not finish in time"
        time.sleep(0.2)
    inline.wait_idle()


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("ada", password="pw")


@pytest.fixture
def api(owner):
    return Client(HTTP_AUTHORIZATION=f"Bearer {tokens.create_token(owner, 'test', read_only=False)[1]}")


def test_a_comparison_made_over_the_api_reports_its_stored_runs_on_the_api_and_its_page(llm_server, owner, api):
    import_shipped_cards()
    debater("Ada")
    llm_server.configure(rules=answer_rules(generate(4, 2, 9)), seed=5)
    body = {
        "title": "Over the API",
        "sample": "arithmetic",
        "count": 4,
        "difficulty": 2,
        "seed": 9,
        "persona": "Ada",
        "arms": [
            {"format": "single-agent"},
            {"format": "self-consistency", "agents": 5},
            {"format": "multi-agent-debate", "name": "Du et al.", "agents": 3, "options": {"rounds": 2}},
            {"format": "mad"},
        ],
        "concurrency": 8,
    }
    made = api.post(f"{API}/comparisons", body, content_type="application/json")
    assert made.status_code == 201, made.content
    comparison_id = made.json()["id"]
    assert made.json()["url"].endswith(f"/comparisons/{comparison_id}/")
    settle(comparison_id)
    status = api.get(f"{API}/batches/comparison/{comparison_id}").json()
    assert status["status"] == "completed" and status["progress"]["done"] == 16

    data = api.get(f"{API}/comparisons/{comparison_id}/report").json()
    comparison = Comparison.objects.get(pk=comparison_id)
    expected = recompute(comparison)
    for arm in data["report"]["arms"]:
        mine = expected["arms"][arm["arm"]]
        assert (arm["questions"], arm["correct"], arm["calls"]["total"]) == (4, mine["correct"], mine["calls"])
        assert (arm["accuracy"]["low"], arm["accuracy"]["high"]) == pytest.approx(mine["wilson"])
    for pair in data["report"]["pairs"]:
        mine = expected["pairs"][(pair["arm_a"], pair["arm_b"])]
        assert (pair["b"], pair["c"]) == (mine["b"], mine["c"])
        assert pair["p_value"]["value"] == pytest.approx(mine["p"])

    browser = Client()
    browser.force_login(owner)
    page = browser.get(reverse("comparison_detail", args=[comparison_id])).content.decode()
    assert "<h1>Over the API</h1>" in page
    assert "Accuracy by arm" in page and "Pairs of arms" in page and "<svg" in page
    du = next(a for a in data["report"]["arms"] if a["arm"] == "Du et al.")
    assert f'<td class="name">Du et al.</td><td>4</td><td>{du["correct"]}</td>' in page
    # The test model has no price: each arm's cost cells say so in two words, and the note under the table why.
    assert page.count("<td>unknown price</td><td>unknown price</td>") == 4
    assert (
        "An arm's cost is unknown when any of its runs made a call at an unknown price: single-agent, 4 of 4 runs; "
        "self-consistency, 4 of 4 runs; Du et al., 4 of 4 runs; mad, 4 of 4 runs." in page
    )
    assert "made a call of unknown price)" not in page
    rows = list(csv.reader(io.StringIO(browser.get(f"/comparisons/{comparison_id}/export/runs.csv").content.decode())))
    assert rows[0][:6] == ["run", "question", "arm", "gold", "answer", "correct"] and len(rows) == 17
    arms = list(csv.reader(io.StringIO(browser.get(f"/comparisons/{comparison_id}/export/arms.csv").content.decode())))
    assert [r[0] for r in arms[1:]] == ["single-agent", "self-consistency", "Du et al.", "mad"]


def test_the_api_refuses_a_bad_spec_listing_every_problem(api):
    import_shipped_cards()
    debater("Ada")
    body = {
        "name": "Bad",
        "sample": "arithmetic",
        "count": 3,
        "persona": "Ada",
        "arms": [{"format": "duel"}, {"format": "mad", "options": {"rounds": 99}}, {"format": "single-agent"}],
        "concurrency": 500,
    }
    refused = api.post(f"{API}/comparisons", body, content_type="application/json")
    assert refused.status_code == 422
    assert [(e["field"], e["message"]) for e in refused.json()["errors"]] == [
        (
            "arms",
            "arm 1 (duel): Judged duel decides no answer; the formats that do are single-agent, self-consistency, "
            "chateval, mad, multi-agent-debate.",
        ),
        ("arms", "arm 2 (mad): rounds: a whole number from 1 to 6, not 99"),
        ("concurrency", "Concurrency must be between 1 and 100."),
    ]
    assert not Comparison.objects.exists()


@pytest.mark.parametrize("operation", ["comparisons", "comparisons/estimate"])
def test_a_spec_reading_problem_and_a_rule_it_breaks_are_told_together_each_on_its_key(api, operation):
    # The persona no one has is the reading's; the name, the concurrency and the visibility are the create's rules,
    # checked on what did read. The arm left without its persona is not told again as "its seat has no persona".
    import_shipped_cards()
    body = {
        "name": " ",
        "sample": "arithmetic",
        "count": 3,
        "arms": [{"format": "single-agent", "persona": "Nobody"}, {"format": "mad"}],
        "concurrency": 0,
        "visibility": "everyone",
    }
    refused = api.post(f"{API}/{operation}", body, content_type="application/json")
    assert refused.status_code == 422
    errors = [(e["field"], e["message"]) for e in refused.json()["errors"]]
    assert [field for field, _ in errors] == ["arms", "name", "concurrency", "visibility"]
    assert errors[0][1].startswith("spec: arms[1]: persona: no persona is named 'Nobody'")
    assert errors[1:] == [
        ("name", "The comparison needs a name."),
        ("concurrency", "Concurrency must be between 1 and 100."),
        ("visibility", "Visibility must be private, unlisted or public."),
    ]
    assert not Comparison.objects.exists()


def test_a_refused_sample_size_is_not_told_again_as_no_questions(api):
    import_shipped_cards()
    debater("Ada")
    body = {"name": "Sized", "sample": "arithmetic", "count": "many", "persona": "Ada", "arms": [{"format": "mad"}]}
    refused = api.post(f"{API}/comparisons/estimate", body, content_type="application/json")
    assert refused.status_code == 422
    assert [e["field"] for e in refused.json()["errors"]] == ["count"]


def test_the_form_offers_the_answering_formats_and_refuses_listing_every_problem(owner):
    import_shipped_cards()
    browser = Client()
    browser.force_login(owner)
    form = browser.get(reverse("comparison_new")).content.decode()
    assert 'value="single-agent"' in form and 'value="mad"' in form and 'value="duel"' not in form
    # The baselines fill the first two arms' rows as the form opens; eight rows in all, the last four folded.
    assert '<option value="single-agent" selected>' in form.split('id="id_arm_1_format"')[1].split("</select>")[0]
    assert '<option value="self-consistency" selected>' in form.split('id="id_arm_2_format"')[1].split("</select>")[0]
    assert form.count('<fieldset class="arm-row">') == 8 and "<summary>More arms (5 to 8)</summary>" in form
    refused = browser.post(reverse("comparison_new"), {"name": "", "concurrency": 8, "visibility": "private"})
    text = refused.content.decode()
    assert refused.status_code == 200
    assert "Upload a question set or choose a sample." in text
    assert text.count("This field is required.") == 4  # the name and the persona, in the summary and at the field
    assert '<a href="#id_arm_1_format">Arm 1&#x27;s format: Choose at least one arm&#x27;s format.</a>' in text
    assert not Comparison.objects.exists()


def arm_rows(*rows: dict) -> dict:
    """The form's arm rows as posted: row N's format, name, agents and rounds (others left empty)."""
    posted = {}
    for number, row in enumerate(rows, start=1):
        for part in ("format", "name", "agents", "rounds"):
            posted[f"arm_{number}_{part}"] = row.get(part, "")
    return posted


def test_each_arm_of_the_form_carries_its_own_agents_and_rounds(llm_server, owner):
    import_shipped_cards()
    ada = debater("Ada")
    browser = Client()
    browser.force_login(owner)
    fields = {"name": "Per arm", "sample": "arithmetic", "count": 2, "difficulty": 1, "seed": 0, "persona": ada.pk}
    fields |= {"concurrency": 4, "visibility": "private"}
    arms = arm_rows(
        {"format": "self-consistency", "name": "Vote of 5", "agents": 5},
        {},
        {"format": "multi-agent-debate", "name": "Du et al.", "agents": 3, "rounds": 2},
        {"format": "mad", "rounds": 1},
    )
    # The running estimate counts each arm at its own options, a question: 5 calls, 3 agents x 3 answers, and
    # MAD's one round (its two speeches and the moderator's final answer, no stop check after its last round).
    line = browser.post(reverse("comparison_estimate"), {**fields, **arms}).content.decode()
    assert "This comparison will run <strong>6 debates</strong> making <strong>34 model calls</strong>." in line
    made = browser.post(reverse("comparison_new"), {**fields, **arms})
    assert made.status_code == 302, made.content.decode()
    comparison = Comparison.objects.get()
    stored = [(a["name"], a["format"], a["options"], len(a["seats"])) for a in comparison.arms]
    assert stored == [
        # A card's seat group takes the arm's agents as its option (agents), so its debates seat that many.
        ("Vote of 5", "self-consistency", {"agents": 5}, 5),
        ("Du et al.", "multi-agent-debate", {"rounds": 2, "agents": 3}, 3),
        ("mad", "mad", {"rounds": 1}, 3),
    ]
    settle(comparison.pk)
    page = browser.get(reverse("comparison_detail", args=[comparison.pk])).content.decode()
    assert (
        '<li class="seat"><strong>Du et al.</strong> <span class="muted">multi-agent-debate · rounds 2 · agents 3'
        " · 3 seats</span></li>" in page
    )
    # What a page watching it is pushed as its runs end: beside the report, the cost panel and each run's row (its
    # debate just changed), each to replace the row of its id.
    pushed = broadcast.live_html(Comparison.objects.get())
    assert '<section id="batch-usage" class="panel small" hx-swap-oob="outerHTML">' in pushed
    assert "No calls yet." not in pushed
    rows = pushed.split('<div hx-swap-oob="replace:#run-pushes"><template>')[1].split("</template></div>")[0]
    for run in Run.objects.filter(comparison=comparison).select_related("debate"):
        row = rows.split(f'<tr id="run-{run.pk}">')[1].split("</tr>")[0]
        assert f'<a href="/debates/{run.debate_id}/">completed</a>' in row
        assert row in page  # the row as the page draws it


def test_an_arm_row_the_form_cannot_run_is_refused_naming_its_row(llm_server, owner):
    import_shipped_cards()
    ada = debater("Ada")
    browser = Client()
    browser.force_login(owner)
    fields = {"name": "Wrong arms", "sample": "multiple-choice", "persona": ada.pk, "concurrency": 2}
    arms = arm_rows(
        {"format": "single-agent", "rounds": 2},
        {"name": "Orphan"},
        {"format": "self-consistency", "agents": 7},
        {"format": "mad", "rounds": 9},
    )
    form = {**fields, "visibility": "private", **arms}
    line = browser.post(reverse("comparison_estimate"), form).content.decode()
    problems = [
        "arm 1 (single-agent): it has no option &#x27;rounds&#x27; (its options: none)",
        "arm 3 (self-consistency): agents: Self-consistency vote seats 3 to 5 agents, not 7",
        "arm 4 (mad): rounds: a whole number from 1 to 6, not 9",
    ]
    assert f'<span class="error-box">{" ".join(problems)} </span>' in line
    refused = browser.post(reverse("comparison_new"), form).content.decode()
    for problem in problems:
        assert f"<li>{problem}</li>" in refused
    assert (
        '<a href="#id_arm_2_format">Arm 2&#x27;s format: Choose its format, or clear its name, agents and rounds.</a>'
        in refused
    )
    assert not Comparison.objects.exists()


def timed_calls(*latencies_ms: int) -> None:
    """This site's recent calls, each taking its time: the pace an estimate reads."""
    owner = get_user_model().objects.create_user("earlier")
    debate = Debate.objects.create(topic="Earlier", format="duel", owner=owner)
    Event.objects.bulk_create(
        Event(debate=debate, kind=Event.Kind.TURN, ordinal=i, latency_ms=ms) for i, ms in enumerate(latencies_ms)
    )


def test_the_estimate_gives_its_time_at_the_sites_pace_alike_on_the_form_the_command_line_and_the_api(
    llm_server, owner, api, tmp_path
):
    import_shipped_cards()
    ada = debater("Ada")
    timed_calls(1500, 2500, 2000)  # 2 s a call
    # 10 questions under a single agent (1 call) and MAD (4 to 9), one debate at once: 50 to 100 calls, 100 to 200 s.
    body = {
        "name": "Timed",
        "sample": "arithmetic",
        "count": 10,
        "persona": "Ada",
        "arms": [{"format": "single-agent"}, {"format": "mad"}],
        "concurrency": 1,
    }
    sized = api.post(f"{API}/comparisons/estimate", body, content_type="application/json")
    assert sized.status_code == 200, sized.content
    basis = "1 call at once, at this site's recent pace, 2.0 s a call"
    assert sized.json() == {
        "debates": 20,
        "calls": 100,
        "fewest_calls": 50,
        "sentence": f"20 debates making 50 to 100 model calls. It will take about 2 to 4 minutes ({basis}).",
        "cost": sized.json()["cost"],
        "time": {
            "low_seconds": 100.0,
            "high_seconds": 200.0,
            "text": "about 2 to 4 minutes",
            "seconds_per_call": 2.0,
            "measured": True,
            "calls_at_once": 1,
            "basis": basis,
        },
    }

    browser = Client()
    browser.force_login(owner)
    fields = {"name": "Timed", "sample": "arithmetic", "count": 10, "difficulty": 3, "seed": 0, "persona": ada.pk}
    form = {**fields, "concurrency": 1, "visibility": "private"}
    form |= arm_rows({"format": "single-agent"}, {"format": "mad"})
    line = browser.post(reverse("comparison_estimate"), form).content.decode()
    assert (
        "This comparison will run <strong>20 debates</strong> making <strong>50 to 100 model calls</strong>. It will "
        f'take <strong class="duration">about 2 to 4 minutes</strong> <span class="muted">({escape(basis)})</span>.'
    ) in line
    # Four at once: 25 to 50 s.
    line = browser.post(reverse("comparison_estimate"), {**form, "concurrency": 4}).content.decode()
    assert (
        '<strong class="duration">under a minute</strong> <span class="muted">(4 calls at once, at this site&#x27;s '
        "recent pace, 2.0 s a call)</span>"
    ) in line

    spec = tmp_path / "timed.yaml"
    spec.write_text(
        "name: Timed\nsample: arithmetic\ncount: 10\npersona: Ada\nconcurrency: 1\n"
        "arms:\n  - {format: single-agent}\n  - {format: mad}\n"
    )
    out = io.StringIO()
    call_command("comparison", "run", str(spec), "--json", stdout=out, stderr=(err := io.StringIO()))
    inline.wait_idle()
    assert (
        "Timed: 20 runs (10 questions \u00d7 single-agent, mad), 50 to 100 model calls. It will take about 2 to 4 "
        f"minutes ({basis})." in " ".join(err.getvalue().split())
    )


def test_on_the_embedded_model_the_time_counts_the_calls_its_slots_answer_at_once(api, settings):
    # No endpoint: the embedded model, two slots, answers two calls at once whatever the concurrency; no call timed.
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    settings.CHAOSLM_LOCAL_SLOTS = 2
    import_shipped_cards()
    debater("Ada")
    body = {"name": "Local", "sample": "arithmetic", "count": 30, "persona": "Ada", "concurrency": 8}
    sized = api.post(f"{API}/comparisons/estimate", {**body, "arms": [{"format": "single-agent"}]}, "application/json")
    assert sized.status_code == 200, sized.content
    # 30 calls at 8 s, two at once: 120 s.
    assert sized.json()["sentence"] == (
        "30 debates making 30 model calls. It will take about 2 minutes (2 calls at once, at a guess of 8.0 s a call "
        "for the embedded model: no call timed yet)."
    )
    assert (sized.json()["time"]["low_seconds"], sized.json()["time"]["calls_at_once"]) == (120.0, 2)


ROWS = [
    {"question": "What is 6 * 7?", "answer": 42},
    {"question": "Which is a prime?", "choices": ["4", "6", "7", "9"], "answer": "C", "material": "Primes: 2, 3, 5."},
    {"id": "capital", "question": "What is the capital of France?", "answer": "Paris"},
]


def test_the_api_takes_a_question_set_inline_as_rows_and_refuses_every_bad_row_by_its_line_and_field(llm_server, api):
    import_shipped_cards()
    debater("Ada")
    body = {"name": "Inline", "questions": ROWS, "persona": "Ada", "arms": [{"format": "single-agent"}]}
    sized = api.post(f"{API}/comparisons/estimate", body, content_type="application/json")
    assert sized.status_code == 200, sized.content
    assert (sized.json()["debates"], sized.json()["sentence"]) == (
        3,
        "3 debates making 3 model calls. It will take under a minute (3 calls at once, at a guess of 4.0 s a call "
        "for a hosted model: no call timed yet).",
    )
    bad = [
        {"question": "What is 1 + 1?"},
        ROWS[0],
        {"question": "Pick", "choices": ["x", "y"], "answer": "A", "colour": 1},
    ]
    refused = api.post(f"{API}/comparisons", {**body, "questions": bad}, content_type="application/json")
    assert refused.status_code == 422
    assert [(e["field"], e["message"]) for e in refused.json()["errors"]] == [
        ("questions", "spec: questions line 1: answer: is missing"),
        (
            "questions",
            "spec: questions line 3: colour: unknown field; the fields are id, question, choices, answer, material",
        ),
    ]
    both = api.post(f"{API}/comparisons", {**body, "sample": "arithmetic"}, content_type="application/json")
    assert both.status_code == 422
    assert both.json()["errors"][0]["message"] == (
        "spec: give one of questions_file, questions or sample (arithmetic or multiple-choice)"
    )
    assert not Comparison.objects.exists()
