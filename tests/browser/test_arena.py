"""The arena in a real browser: a tournament run from the command line with `arena: true`, then an anonymous
visitor reads a match without names, votes by keyboard (at 390 px and at 1280 px), sees who was who and goes on
to the next match until none is left; axe-clean, no sideways scroll on the phone."""

import re

import pytest

from tests.batches.helpers import always_for
from tests.browser.conftest import assert_clean, manage, screenshot, visitor, vote_by_keyboard

pytestmark = pytest.mark.browser

NAMES = ("Ada Sterling", "Marcus Vale")
HIDDEN = ("ada", "sterling", "marcus", "vale", "test-model", "okafor")
VOTE = "Vote and see who was who"


def test_the_arena_by_keyboard_at_both_widths(browser, site, site_env, llm, tmp_path):
    llm.configure(rules=always_for(NAMES))
    spec = tmp_path / "arena.yaml"
    spec.write_text(
        "name: Arena league\noptions: {turns: 2}\ndebaters: [Ada Sterling, Marcus Vale]\n"
        'judges: [Judge Ines Okafor]\nquestions: ["Should cities ban private cars?"]\nsides: both\narena: true\n'
        "visibility: public\n"
    )
    report = re.search(r"/tournaments/(\d+)/", manage(site_env, "tournament", "run", str(spec))).group(0)

    for width, choice in ((390, 0), (1280, 2)):
        page = visitor(browser, width)
        page.goto(site + "/arena/")
        text = page.inner_text("main").lower()
        assert "debater 1" in text and "debater 2" in text
        assert not [name for name in HIDDEN if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text)], text
        assert_clean(page, width)
        screenshot(page, f"arena-{width}")

        vote_by_keyboard(page, "1", choice, VOTE)
        reveal = page.inner_text("#arena-reveal")
        assert ("You picked Debater 1" if choice == 0 else "You called it a tie") in reveal
        assert NAMES[0] in reveal and NAMES[1] in reveal
        assert "counted" in page.inner_text(".messages")
        assert_clean(page, width)
        screenshot(page, f"arena-revealed-{width}")

        # On to the next match by keyboard: the other of the two, then none left.
        page.focus("a:has-text('Next match')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#arena-vote")
        vote_by_keyboard(page, "1", 1, VOTE)
        assert "You picked Debater 2" in page.inner_text("#arena-reveal")
        page.click("a:has-text('Next match')")
        page.wait_for_selector("text=You have voted on every match in the arena")
        page.context.close()

    # The tournament's report: its human section, from the four votes.
    for width in (390, 1280):
        page = visitor(browser, width)
        page.goto(site + report)
        human = page.inner_text("#human")
        assert "4 votes from 2 people on 2 matches." in human and "Cohen's kappa" in human
        assert_clean(page, width)
        page.locator("#human").scroll_into_view_if_needed()
        screenshot(page, f"tournament-human-{width}")
        page.context.close()
