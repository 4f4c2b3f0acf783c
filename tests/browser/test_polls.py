"""The audience's poll in a real browser: anonymous visitors on a share link vote before the debate (by
keyboard, at 390 px, and by mouse at 1280 px), watch each other's votes arrive, vote after it (one without
JavaScript, by a plain form post), and see the result beside the judge's verdict once the owner closes the vote."""

from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import screenshot
from tests.browser.test_debate_pages import create

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots-audience")
PHONE, DESKTOP = 390, 1280


def visitor(browser, width, javascript=True):
    context = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=javascript)
    page = context.new_page()
    page.set_default_timeout(60_000)
    return page


def box_text(page):
    return page.inner_text("#poll-box")


def shoot(page, name):
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    screenshot(page, name)


def test_visitors_vote_before_watch_vote_after_and_see_the_result_beside_the_verdict(pages, browser, site, llm):
    # Held a minute, so the vote before is open however slowly the pages load; the owner starts it once the
    # visitors have voted.
    llm.configure(latency=0.05, token_rate=0, reply_words=20)
    owner = pages.new("alice")
    create(
        owner,
        site,
        "duel",
        "Should cities ban private cars?",
        {"a": "Ada Sterling (debater)", "b": "Marcus Vale (debater)", "judge": "Judge Ines Okafor (judge)"},
        {"turns": 2},
        visibility="unlisted",
        hold="1 minute",
    )
    share_url = owner.input_value(".share-link")
    phone, desk = visitor(browser, PHONE), visitor(browser, DESKTOP)
    for page in (phone, desk):
        page.goto(share_url)
        assert "Before the debate: where do you stand?" in box_text(page)
        assert "Vote to see how the room stands" in box_text(page) and "%" not in box_text(page)

    # By keyboard on the phone: the first option, Space, Tab to the button, Enter.
    phone.focus("#poll-box input[name=choice][value=a]")
    phone.keyboard.press("Space")
    phone.keyboard.press("Tab")
    assert phone.evaluate("document.activeElement.textContent.trim()") == "Vote"
    phone.keyboard.press("Enter")
    phone.wait_for_selector("#poll-box .poll-mine")
    assert "You voted: Ada Sterling (for)" in box_text(phone) and "100%" in box_text(phone)
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE
    shoot(phone, "poll-voted-before-390")
    results = Axe().run(phone)
    assert results.violations_count == 0, results.generate_report()

    desk.check("#poll-box input[name=choice][value=b]")
    desk.click("#poll-box button[type=submit]")
    desk.wait_for_selector("#poll-box .poll-mine")
    # The phone's page is told the poll changed and fetches its own box: it now shows the room split.
    phone.wait_for_function("() => document.querySelector('#poll-box').innerText.includes('50%')")

    owner.click("#hold-box button:has-text('Start now')")
    for page in (phone, desk):
        page.wait_for_selector("#verdict .winner", timeout=90_000)
        page.wait_for_function(
            "() => document.querySelector('#poll-box').innerText.includes('After the debate')", timeout=30_000
        )
    for page in (phone, desk):
        page.check("#poll-box input[name=choice][value=b]")
        page.click("#poll-box button[type=submit]")
        page.wait_for_function("() => document.querySelector('#poll-box').innerText.includes('You voted: Marcus')")
    # Without JavaScript: a plain form post with its CSRF token, redirected back to the page.
    plain = visitor(browser, DESKTOP, javascript=False)
    plain.goto(share_url)
    plain.check("#poll-box input[name=choice][value=undecided]")
    plain.click("#poll-box button[type=submit]")
    plain.wait_for_url(share_url + "#poll-box")
    assert "Your vote is counted" in plain.inner_text(".messages")
    assert "You voted: Undecided" in box_text(plain)

    owner.reload()
    owner.click("#poll-box button:has-text('Close the vote now')")
    owner.wait_for_selector("#poll-box .poll-result")
    for page in (phone, desk):
        page.wait_for_selector("#poll-box .poll-result", timeout=15_000)
        text = box_text(page)
        # Before: 1 and 1 of 2 (50, 50). After: 2 of 3 for Marcus Vale (66.7), 1 undecided: +16.7 against -50.
        assert "+16.7 pts" in text and "-50.0 pts" in text
        assert "The audience's winner (the larger gain): Marcus Vale (against)" in text
        assert "The judge's verdict:" in text and ("The audience agrees." in text or "The audience disagrees." in text)
        assert "Of 2 people who voted both times, 1 changed their mind." in text
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE
    results = Axe().run(desk)
    assert results.violations_count == 0, results.generate_report()
    shoot(phone, "poll-result-390")
    shoot(desk, "poll-result-1280")
    for page in (phone, desk, plain):
        page.context.close()
