"""An experiment in a real browser: the sample set uploaded through the form, run, its report read logged out
through the share link, at desktop and phone widths, checked with axe-core."""

import json
import time

import pytest
from axe_playwright_python.sync_playwright import Axe

from experiments.questions import SAMPLE
from tests.browser.conftest import ARTIFACTS, manage, screenshot

pytestmark = pytest.mark.browser


def axe_violations(page) -> list[str]:
    return [f"{v['id']}: {v['help']}" for v in Axe().run(page).response["violations"]]


def test_the_sample_set_uploaded_runs_and_its_report_is_read_through_the_share_link(pages, site, llm):
    owner = pages.new("alice")
    owner.goto(site + "/experiments/new/")
    # A bad file first: refused naming its line, nothing lost of what was typed.
    owner.fill("#id_name", "Does debate help?")
    owner.set_input_files(
        "#id_questions_file", files=[{"name": "bad.jsonl", "mimeType": "application/jsonl", "buffer": b"[1]\n"}]
    )
    owner.get_by_label("Ada Sterling").check()
    owner.get_by_label("Marcus Vale").check()
    owner.get_by_label("Judge Ines Okafor").check()
    owner.click("button.primary")
    assert "bad.jsonl line 1: expected a JSON object" in owner.inner_text("form.new-debate")
    assert owner.input_value("#id_name") == "Does debate help?"
    assert axe_violations(owner) == []
    # Then the sample set, as a file.
    owner.set_input_files(
        "#id_questions_file",
        files=[{"name": SAMPLE.name, "mimeType": "application/jsonl", "buffer": SAMPLE.read_bytes()}],
    )
    owner.get_by_label("Ada Sterling").check()
    owner.get_by_label("Marcus Vale").check()
    owner.get_by_label("Judge Ines Okafor").check()
    owner.get_by_label("Consultancy: one consultant argues one answer; the judge asks questions").uncheck()
    owner.fill("#id_rounds", "1")
    owner.select_option("#id_visibility", "unlisted")
    owner.click("button.primary")
    owner.wait_for_url("**/experiments/*/")
    # The report fills in as runs are judged, pushed to the open page: no reload.
    judged = "Number(document.querySelector('#accuracy tbody tr td:nth-child(2)')?.textContent || 0)"
    at_load = owner.evaluate(f"() => {judged}")
    assert at_load < 48  # of the debates' 48 runs: some are still to be judged
    owner.wait_for_function(f"() => {judged} > {at_load}", timeout=60_000)
    deadline = time.monotonic() + 180
    while "status-completed" not in (owner.get_attribute("#progress", "class") or ""):
        assert time.monotonic() < deadline, "the experiment did not finish"
        time.sleep(1)
        owner.reload()
    assert owner.inner_text("#progress .t-done") == "72"
    screenshot(owner, "experiment-owner")
    for part in ("debaters", "judges", "runs"):
        owner.locator(f"#{part}").screenshot(path=str(ARTIFACTS / f"experiment-{part}.png"))
    share_url = owner.input_value(".share-link")

    visitor = pages.new()
    visitor.goto(share_url)
    rows = visitor.eval_on_selector_all("#accuracy tbody td.name", "els => els.map(e => e.innerText)")
    assert rows == ["Debate", "Blind"]
    # The test server's judge answers 50-50: half right by the rule, with an interval.
    assert visitor.locator("#accuracy tbody tr").first.locator("td").nth(3).inner_text() == "50%"
    assert visitor.locator("svg.accuracy-chart rect.bar").count() == 2
    assert "\u2014 (" in visitor.inner_text("#judges")  # the flip rate of a 50-50 judge, and why
    assert visitor.locator(".tournament-controls").count() == 0
    assert axe_violations(visitor) == []
    screenshot(visitor, "experiment-shared")
    visitor.locator("#calibration").scroll_into_view_if_needed()
    visitor.screenshot(
        path=str(ARTIFACTS / "experiment-shared-charts.png"), clip={"x": 0, "y": 0, "width": 1300, "height": 1400}
    )
    visitor.set_viewport_size({"width": 390, "height": 844})
    assert visitor.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    screenshot(visitor, "experiment-shared-phone")
    visitor.screenshot(path=str(ARTIFACTS / "experiment-shared-phone-top.png"))


QUILL = """name: Judge Quill
role: judge
personality: Quill reads closely.
judging_criteria: Weigh each argument's logic.
"""
FERRY = {
    "passage": "The ferry left at dawn. Only Ines Varga knew the cargo was salt.",
    "question": "Who knew what the ferry carried?",
    "answers": ["Ines Varga", "The captain"],
    "correct": 0,
}


def test_the_panels_second_judge_reads_the_debate_its_page_shows(pages, site, site_env, llm, tmp_path):
    llm.configure(
        rules=[
            {"match": 'arguing for [AB]: "Ines Varga"', "reply": "<quote>Only Ines Varga knew the cargo</quote>."},
            {"match": 'arguing for [AB]: "The captain"', "reply": "<quote>the captain knew the cargo</quote>."},
        ]
    )
    (tmp_path / "quill.yaml").write_text(QUILL)
    (tmp_path / "ferry.jsonl").write_text(json.dumps(FERRY) + "\n")
    spec = tmp_path / "panel.yaml"
    spec.write_text(
        "name: Panel of two\nquestions_file: ferry.jsonl\nprotocols: [evidence_debate]\n"
        "debaters: [Ada Sterling, Marcus Vale]\njudges: [Judge Ines Okafor, quill.yaml]\n"
        "options: {rounds: 1}\nvisibility: public\n"
    )
    manage(site_env, "experiment", "run", str(spec))
    found = manage(
        site_env,
        "shell",
        "-c",
        "from debates.models import Debate; d = Debate.objects.get(format='evidence_judge', "
        "experiment_run__experiment__name='Panel of two', experiment_run__swapped=False, "
        "seats__name='Judge Quill', options__source_debate__isnull=False, "
        "experiment_run__first__name='Ada Sterling'); print(d.pk, d.options['source_debate'])",
    )
    replay, source = found.strip().splitlines()[-1].split()
    visitor = pages.new()
    visitor.goto(f"{site}/debates/{replay}/")
    intro = visitor.inner_text(".replay-turns p")
    assert intro.startswith(f"The judge alone reads the speeches of debate #{source}, as that debate's own judge did")
    visitor.click(".replay-turns summary")
    assert visitor.inner_text(".replay-turns summary") == "The 2 speeches judged"
    assert visitor.locator(".replay-turns .quote.verified").count() == 1  # Ada's, arguing the passage's answer
    assert visitor.locator(".replay-turns .quote.unverified").count() == 1
    assert "Judge Quill" in visitor.inner_text(".seats")
    assert visitor.inner_text("#verdict .winner") == "Answer: undecided"  # the test server's judge: 50-50
    assert visitor.locator("#score-chart.panel").count() == 0  # no turn is scored in an evidence protocol
    assert axe_violations(visitor) == []
    screenshot(visitor, "experiment-replay")
    visitor.click(".replay-turns p a")
    visitor.wait_for_url(f"**/debates/{source}/")
    assert "Judge Ines Okafor" in visitor.inner_text(".seats")
    visitor.set_viewport_size({"width": 390, "height": 844})
    visitor.go_back()
    assert visitor.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    screenshot(visitor, "experiment-replay-phone")


def test_the_forms_estimate_follows_typing_without_leaving_the_field(pages, site):
    owner = pages.new("alice")
    owner.goto(site + "/experiments/new/")
    assert "to see how many debates and LLM calls the experiment will make" in owner.inner_text("#estimate")
    owner.get_by_label("Use the sample set").check()
    owner.get_by_label("Ada Sterling").check()
    owner.get_by_label("Marcus Vale").check()
    owner.get_by_label("Judge Ines Okafor").check()
    owner.get_by_label("Consultancy: one consultant argues one answer; the judge asks questions").uncheck()
    # 12 questions: 4 debate runs each (2 pairs, both orders) of 2 + 2R + 1 calls, 2 blind runs of 1 call.
    owner.wait_for_selector("#estimate:has-text('72 debates: 456 LLM calls.')")  # three rounds, the default
    owner.locator("#id_rounds").fill("")
    owner.locator("#id_rounds").press_sequentially("1")
    owner.wait_for_selector("#estimate:has-text('72 debates: 264 LLM calls.')")
    assert owner.evaluate("document.activeElement.id") == "id_rounds"  # still typing there: no blur needed
    screenshot(owner, "experiment-form-estimate")
