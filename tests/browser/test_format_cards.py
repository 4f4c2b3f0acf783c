"""A protocol card's pages as a person uses them: the formats list from the navigation, a card's page with its
plan changed by keyboard through its options form, axe-clean and no wider than a phone, photographed at 390 and
1280 px (test-artifacts/), its YAML shown as text; and the card offered in the new-debate form."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import assert_clean, manage, screenshot, visitor
from tests.debates import card_samples
from tests.servers import ROOT

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def card(site_env, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cards")
    (folder / "speeches.yaml").write_text(card_samples.SPEECHES)
    manage(site_env, "import_formats", str(folder), str(ROOT / "cards"), "--missing")
    return "speeches"


@pytest.mark.parametrize("width", [1280, 390])
def test_the_card_page_shows_its_plan_and_follows_its_options_by_keyboard(browser, site, card, width):
    page = visitor(browser, width)
    page.goto(site + "/")
    if width == 1280:
        page.click("nav >> text=Formats")
    else:
        page.goto(site + "/formats/")
    page.click("text=Speeches <in turn>")
    page.wait_for_url(site + "/formats/speeches/")
    assert page.locator("h1").inner_text() == "Speeches <in turn>"
    assert page.locator(".timeline-call").count() == 4
    assert "exactly 4 LLM calls" in page.inner_text("#plan-summary")
    assert page.inner_text("pre.card-source") == card_samples.SPEECHES
    assert_clean(page, width)
    screenshot(page, f"format-card-{width}")
    # By keyboard: into the options form, a new value, Enter sends it; the plan follows.
    page.focus("#id_option_speeches")
    page.keyboard.press("Control+A")
    page.keyboard.type("5")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*option_speeches=5"))
    assert page.locator(".timeline-call").count() == 7
    assert "exactly 7 LLM calls" in page.inner_text("#plan-summary")
    whos = page.locator(".timeline-call .who").all_inner_texts()
    assert whos == ["Proponent", "Opponent", "Proponent", "Opponent", "Proponent", "Opponent", "Proponent"]
    labels = page.locator(".timeline-call .badge").all_inner_texts()
    assert [label.lower() for label in labels] == ["private", "private", *["public"] * 5]
    page.context.close()


def test_the_new_debate_form_offers_the_card_with_its_seats_and_options(pages, site, card):
    page = pages.new("alice")
    page.goto(site + "/debates/new/")
    # The cards wait behind their disclosure while a built-in is chosen.
    assert not page.locator("input[name=format][value=speeches]").is_visible()
    page.click("details.format-cards > summary")
    page.check("input[name=format][value=speeches]")
    page.wait_for_selector("#id_seat_pro")
    assert page.locator("#id_option_speeches").input_value() == "2"
    assert page.locator("label[for=id_seat_con]").inner_text().startswith("Opponent")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_shipped_judged_card_shows_who_scores_each_speech(browser, site, card, width):
    page = visitor(browser, width)
    page.goto(site + "/formats/duel-card/?option_turns=2&option_word_limit=0")
    scored = page.locator(".timeline-call .judged").all_inner_texts()
    assert scored == ["Scored by: Judge"] * 2
    calls = int(re.search(r"exactly (\d+) LLM calls", page.inner_text("#plan-summary")).group(1))
    assert calls == 4 * 2 + 6  # the judged duel's count at two turns
    assert_clean(page, width)
    screenshot(page, f"format-card-duel-{width}")
    page.context.close()
