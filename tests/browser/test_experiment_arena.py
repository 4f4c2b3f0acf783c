"""The evidence arena in a real browser: an experiment run from the command line with `arena: true`, then an
anonymous visitor reads an evidence debate without names, answers by keyboard (at 390 px and at 1280 px), sees the
correct answer and who argued what, and goes on to the next debate; the report's human row counts their answers.
Axe-clean, no sideways scroll on the phone."""

import json
import re

import pytest

from tests.browser.conftest import ARTIFACTS, assert_clean, manage, screenshot, visitor, vote_by_keyboard

pytestmark = pytest.mark.browser

HIDDEN = ("ada", "sterling", "marcus", "vale", "test-model", "okafor", "ines")
ANSWER = "Answer and see who argued what"
QUESTION = {
    "passage": "The lantern fair moved to the quarry in 1987 because floods had destroyed the footbridge.",
    "question": "Why did the lantern fair move in 1987?",
    "answers": ["Floods destroyed the footbridge", "The quarry had more space"],
    "correct": 0,
}


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
        screenshot(page, f"evidence-arena-{width}")

        vote_by_keyboard(page, "A", choice, ANSWER)
        reveal = page.inner_text("#arena-reveal")
        assert f"You picked answer {'AB'[choice]}" in reveal and "The correct answer is" in reveal
        assert "Ada Sterling" in reveal and "Marcus Vale" in reveal
        assert "counted" in page.inner_text(".messages")
        assert_clean(page, width)
        screenshot(page, f"evidence-arena-revealed-{width}")

        # On to the next debate by keyboard.
        page.focus("a:has-text('Next debate')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#arena-vote")
        vote_by_keyboard(page, "A", 0, ANSWER)
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
        screenshot(page, f"experiment-human-{width}")
        page.locator("#human").screenshot(path=str(ARTIFACTS / f"experiment-human-row-{width}.png"))
        page.context.close()
