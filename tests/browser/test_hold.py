"""The owner's hold of the start in a real browser: the owner holds a duel a minute from the new-debate form; its
page and its share page count down (a phone at 390 px, a desktop at 1280 px), with the start time as text that
stands without JavaScript; the countdown never moves the page; the pages are axe-clean and work by keyboard;
no model is called during the hold; the owner's "Start now" starts it, and every page's countdown goes."""

import re
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser

SHOTS = Path("/work/wt/hold-shots") if Path("/work/wt").is_dir() else Path("/tmp/hold-shots")
PHONE, DESKTOP = 390, 1280


def visitor(browser, width, javascript=True):
    context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=javascript)
    page = context.new_page()
    page.set_default_timeout(60_000)
    return page


def shoot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    screenshot(page, name)


def countdown(page):
    return page.inner_text("[data-hold-seconds]")


def layout(page):
    """Where the countdown box and what follows it sit: a countdown that moved the page would change these."""
    return page.evaluate(
        "() => [document.querySelector('#hold-box').getBoundingClientRect().height,"
        " document.querySelector('.layout').getBoundingClientRect().top,"
        " document.querySelector('[data-hold-seconds]').getBoundingClientRect().width]"
    )


def test_a_held_duel_counts_down_on_its_pages_and_starts_when_the_owner_says(pages, browser, site, llm):
    llm.configure(latency=0.05, token_rate=0, reply_words=20)
    owner = pages.new("alice")
    owner.goto(site + "/debates/new/")
    owner.fill("#id_topic", "Should cities ban private cars?")
    owner.select_option("#id_seat_a", label="Ada Sterling (debater)")
    owner.select_option("#id_seat_b", label="Marcus Vale (debater)")
    owner.select_option("#id_seat_judge", label="Judge Ines Okafor (judge)")
    owner.fill("#id_option_turns", "2")
    owner.select_option("#id_visibility", "unlisted")
    owner.select_option("#id_hold", label="1 minute")
    owner.click("button.primary")
    owner.wait_for_url("**/debates/*/")
    share_url = owner.input_value(".share-link")
    owner.set_viewport_size({"width": DESKTOP, "height": 900})

    phone, desk = visitor(browser, PHONE), owner
    phone.goto(share_url)
    for page in (phone, desk):
        text = page.inner_text("#hold-box")
        assert re.search(r"The debate starts at \d\d:\d\d:\d\d UTC\.", text)
        assert re.fullmatch(r"in [01]:\d\d", page.inner_text(".hold-countdown"))
        assert page.get_attribute(".hold-countdown", "role") == "timer"
        assert page.inner_text("#status").strip() == "Held so an audience can gather: it has not started."
        # The box sits in the transcript's column beside the side panel (at 1280 px), not over an empty column.
        beside = page.evaluate(
            "(() => { const box = document.querySelector('#hold-box').getBoundingClientRect();"
            " const side = document.querySelector('.side-panel').getBoundingClientRect();"
            " return [box.right <= side.left, Math.abs(box.top - side.top) < 2]; })()"
        )
        assert beside == ([True, True] if page is desk else [False, False]), beside
    assert "Start now" in desk.inner_text("#hold-box") and "Start now" not in phone.inner_text("#hold-box")
    # The owner cannot "End" what has not started; "Start now" is the control.
    assert not desk.is_visible("#controls button:has-text('End debate')")

    # It counts down, and its ticking moves nothing on the page.
    first, before = countdown(phone), layout(phone)
    phone.wait_for_function(f"() => document.querySelector('[data-hold-seconds]').textContent !== '{first}'")
    phone.wait_for_timeout(1100)
    assert countdown(phone) < first and layout(phone) == before
    # Minutes and seconds on every tick (the rooms' seconds-only countdown once wrote over it each second).
    assert re.fullmatch(r"[01]:\d\d", countdown(phone))
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE
    shoot(phone, "hold-countdown-390")
    shoot(desk, "hold-countdown-1280")
    for page in (phone, desk):
        results = Axe().run(page)
        assert results.violations_count == 0, results.generate_report()

    # By keyboard, the visitor follows the countdown's link to the vote before the debate, and votes.
    phone.focus("#hold-box a[href='#poll-box']")
    phone.keyboard.press("Enter")
    assert phone.url.endswith("#poll-box")
    phone.focus("#poll-box input[name=choice][value=a]")
    phone.keyboard.press("Space")
    phone.keyboard.press("Tab")
    phone.keyboard.press("Enter")
    phone.wait_for_selector("#poll-box .poll-mine")

    # Without JavaScript the start time stands as text.
    plain = visitor(browser, PHONE, javascript=False)
    plain.goto(share_url)
    assert re.search(r"starts at \d\d:\d\d:\d\d UTC", plain.inner_text("#hold-box"))
    plain.context.close()

    assert llm.requests == []  # nothing was asked of a model during the hold
    desk.focus("#hold-box button:has-text('Start now')")
    desk.keyboard.press("Enter")
    desk.wait_for_selector(".messages:has-text('The debate is starting now.')")
    for page in (phone, desk):
        page.wait_for_selector("#hold-box", state="hidden", timeout=30_000)
        page.wait_for_selector("#verdict .winner", timeout=90_000)
    assert llm.requests
    phone.context.close()
