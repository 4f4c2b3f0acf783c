"""A tournament of structured debates judged by a two-judge panel, in a real browser: made from the form, run to
the end, its page read (both judges' verdicts, no duel wording), axe-core clean at 1280 and 390 px."""

import time

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import manage, screenshot

pytestmark = pytest.mark.browser


def test_a_structured_tournament_with_two_judges_from_the_form(pages, site, site_env, llm):
    manage(
        site_env,
        "shell",
        "-c",
        "from personas.models import Persona; Persona.objects.get_or_create(name='Judge Vera Lind', "
        "defaults={'role': 'judge', 'personality': 'Vera weighs each point.', 'judging_criteria': 'Logic.'})",
    )
    owner = pages.new("alice")
    owner.goto(site + "/tournaments/new/")
    owner.fill("#id_name", "Structured cup")
    owner.get_by_label("Ada Sterling").check()
    owner.get_by_label("Marcus Vale").check()
    owner.get_by_label("Judge Ines Okafor").check()
    owner.get_by_label("Judge Vera Lind").check()
    # By value: other browser tests share this site and may have imported a card titled "Judged duel (card)".
    owner.locator("input[name=formats][value=duel]").uncheck()
    owner.locator("input[name=formats][value=structured]").check()
    owner.fill("#id_questions", "Is tea better than coffee? | Tea is better | for")
    owner.select_option("#id_sides", "once")
    owner.locator("#id_sides").dispatch_event("change")
    # One structured debate (12 calls) and each judge's replay of its ten public statements (24 calls each).
    owner.wait_for_selector("#estimate:has-text('1 structured debate and 2 judge replays: 3 debates, 60 LLM calls.')")
    owner.click("button.primary")
    owner.wait_for_url("**/tournaments/*/")
    owner.wait_for_selector("#progress.status-completed", timeout=90_000)
    assert "Structured debates" in owner.inner_text("header.debate-head")
    assert "Judged duel" not in owner.inner_text("header.debate-head")
    owner.wait_for_selector("#judges table")
    judges = owner.eval_on_selector_all("#judges td.name", "els => els.map(e => e.innerText)")
    assert judges == ["Judge Ines Okafor", "Judge Vera Lind"]
    verdicts = owner.eval_on_selector_all("#judges tbody tr", "rows => rows.map(r => r.cells[1].innerText)")
    assert verdicts == ["1", "1"]
    assert owner.inner_text("#matches thead").split("\t")[4].strip() == "Debate"
    # Both judgments link their replays, each naming its winner (or its status).
    deadline = time.monotonic() + 10
    while owner.locator("#matches tbody tr td:nth-child(6) a").count() < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert owner.locator("#matches tbody tr td:nth-child(6) a").count() == 2
    assert owner.locator("#formats").is_hidden()  # one format: nothing to compare
    for width in (1280, 390):
        owner.set_viewport_size({"width": width, "height": 900})
        assert owner.evaluate("document.documentElement.scrollWidth") <= width
        found = Axe().run(owner)
        assert found.violations_count == 0, found.generate_report()
        screenshot(owner, f"tournament-structured-{width}")
