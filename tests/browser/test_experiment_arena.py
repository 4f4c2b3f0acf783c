"""The evidence arena in a real browser: an experiment run from the command line with `arena: true`, then an
anonymous visitor reads an evidence debate without names, answers by keyboard (at 390 px and at 1280 px), sees the
correct answer and who argued what, and goes on to the next debate; the report's human row counts their answers.
Axe-clean, no sideways scroll on the phone."""

import json
import re
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import manage, screenshot

pytestmark = pytest.mark.browser

SHOTS = Path("/work/wt/arena-shots")
HIDDEN = ("ada", "sterling", "marcus", "vale", "test-model", "okafor", "ines")
QUESTION = {
    "passage": "The lantern fair moved to the quarry in 1987 because floods had destroyed the footbridge.",
    "question": "Why did the lantern fair move in 1987?",
    "answers": ["Floods destroyed the footbridge", "The quarry had more space"],
    "correct": 0,
}


def shoot(page, name):
    if SHOTS.parent.is_dir():
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    screenshot(page, name)


def visitor(browser, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    return page


def answer_by_keyboard(page, choice_index):
    """From the skip link to the answer: Enter on it, Tab into the options, Space and arrows to choose, Tab, Enter."""
    page.focus("a[href='#arena-vote']")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.value") == "A"
    page.keyboard.press("Space")
    for _ in range(choice_index):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Answer and see who argued what"
    page.keyboard.press("Enter")
    page.wait_for_selector("#arena-reveal")


def assert_clean(page, width):
    if width == 390:
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()


def test_the_evidence_arena_by_keyboard_at_both_widths(browser, site, site_env, llm, tmp_path):
    llm.configure(
        rules=[{"match": "Give the probability that each answer is correct", "reply": '{"A": 0.8, "B": 0.2}'}]
    )
    spec = tmp_path / "evidence-arena.yaml"
    spec.write_text(
        "name: Evidence arena\nprotocols: [evidence_debate]\ndebaters: [Ada Sterling, Marcus Vale]\n"
        f"judges: [Judge Ines Okafor]\noptions: {{rounds: 1, word_limit: 60}}\nquestions: [{json.dumps(QUESTION)}]\n"
        "arena: true\nvisibility: public\n"
    )
    report = re.search(r"/experiments/(\d+)/", manage(site_env, "experiment", "run", str(spec))).group(0)

    for width, choice in ((390, 0), (1280, 1)):
        page = visitor(browser, width)
        page.goto(site + "/arena/evidence/")
        text = page.inner_text("main")
        assert "Debater A" in text and "Debater B" in text and QUESTION["question"] in text
        assert QUESTION["passage"] not in text  # the judge never reads it, nor does the voter
        found = [name for name in HIDDEN if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text.lower())]
        assert not found, text
        assert_clean(page, width)
        shoot(page, f"evidence-arena-{width}")

        answer_by_keyboard(page, choice)
        reveal = page.inner_text("#arena-reveal")
        assert f"You picked answer {'AB'[choice]}" in reveal and "The correct answer is" in reveal
        assert "Ada Sterling" in reveal and "Marcus Vale" in reveal
        assert "counted" in page.inner_text(".messages")
        assert_clean(page, width)
        shoot(page, f"evidence-arena-revealed-{width}")

        # On to the next debate by keyboard.
        page.focus("a:has-text('Next debate')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#arena-vote")
        answer_by_keyboard(page, 0)
        assert "You picked answer A" in page.inner_text("#arena-reveal")
        page.context.close()

    # The experiment's report: its human row, from the four answers.
    for width in (390, 1280):
        page = visitor(browser, width)
        page.goto(site + report)
        human = page.inner_text("#human")
        assert "4 answers from 2 people on" in human and "People (arena)" in human and "Judge Ines Okafor" in human
        assert_clean(page, width)
        page.locator("#human").scroll_into_view_if_needed()
        shoot(page, f"experiment-human-{width}")
        if SHOTS.is_dir():
            page.locator("#human").screenshot(path=str(SHOTS / f"experiment-human-row-{width}.png"))
        page.context.close()
