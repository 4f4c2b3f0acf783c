"""No refusal loses what the person typed, and an input that cannot be used is disabled and says why."""

import pytest

from tests.browser.conftest import screenshot
from tests.browser.test_debate_pages import create
from tests.browser.test_rooms import open_room

pytestmark = pytest.mark.browser

DUEL_SEATS = {"a": "Ada Sterling (debater)", "b": "Marcus Vale (debater)", "judge": "— no judge —"}


def test_a_room_refusal_keeps_the_text_and_auto_mode_disables_the_input(pages, site, llm):
    llm.configure(latency=0.1, token_rate=60, reply_words=6)
    page = pages.new("carol")
    open_room(page, site, "Refusals", ["Ada Sterling", "Marcus Vale"])
    page.fill("form.say textarea", "First question")
    page.click("form.say button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 2")
    assert page.input_value("form.say textarea") == ""  # accepted: the input is cleared for the next one
    # Manual mode with answers pending: Send is refused, and what was typed stays.
    page.fill("form.say textarea", "A second thought I do not want to lose")
    page.click("form.say button")
    page.wait_for_selector("#notice:not([hidden])")
    assert page.inner_text("#notice") == "Keep or drop the pending answers first."
    assert page.input_value("form.say textarea") == "A second thought I do not want to lose"
    # Keep the answers; switch to auto mode: the input is disabled (not only dimmed), still holding the
    # text, and says why, by a description the textarea points to.
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 0")
    llm.configure(latency=2.0)
    page.click("#auto-toggle")
    page.wait_for_selector("#room-status.mode-auto")
    textarea = page.locator("form.say textarea")
    page.wait_for_function("() => document.querySelector('form.say textarea').disabled")
    assert page.locator("form.say button").is_disabled()
    assert textarea.input_value() == "A second thought I do not want to lose"
    # The textarea is described by the room's hint and, in auto mode, by why it is closed.
    assert "say-off" in textarea.get_attribute("aria-describedby").split()
    described = page.locator("#say-off")
    assert described.is_visible()
    assert described.inner_text() == "Auto mode is on: switch to manual mode (Ctrl/Cmd+M) to type."
    # The keyboard cannot reach it either.
    page.focus("#auto-toggle")
    for _ in range(4):
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"
    screenshot(page, "room-auto-input-off")
    # A page loaded while auto mode runs has it off from the start.
    page.reload()
    assert page.locator("form.say textarea").is_disabled() and page.locator("#say-off").is_visible()
    # Back to manual: usable again, the description hidden.
    page.click("#auto-toggle")
    page.wait_for_selector("#room-status.mode-manual")
    page.wait_for_function("() => !document.querySelector('form.say textarea').disabled")
    assert not page.locator("#say-off").is_visible()


def test_a_refused_speech_keeps_the_text(pages, site, llm):
    """The debate limit refuses the person's message (it would set a fifth debate running): the text stays."""
    llm.configure(latency=0.05, token_rate=80, reply_words=12)
    owner = pages.new("dave")
    waiting = create(
        owner,
        site,
        "standard",
        "Tabs or spaces?",
        {
            "moderator": "Sam Reyes (moderator)",
            "p1": "Ada Sterling (debater)",
            "p2": "Marcus Vale (debater)",
            "human": True,
        },
        {"max_turns": 6},
    )
    owner.wait_for_selector("#status.status-waiting", timeout=30_000)
    # Four other debates running slowly: the most one person may run at once.
    llm.configure(latency=8.0)
    others = [create(owner, site, "duel", f"Slow {n}", DUEL_SEATS, {"turns": 1}) for n in range(4)]
    try:
        owner.goto(waiting)
        owner.wait_for_selector("#status.status-waiting")
        owner.fill("#speak-text", "Spaces, because diffs stay clean.")
        owner.click("form.speak button")
        owner.wait_for_selector("#speak-errors:has-text('the most one person may run at once')")
        assert owner.input_value("#speak-text") == "Spaces, because diffs stay clean."
    finally:
        llm.configure(latency=0.0)
        for url in others:
            owner.goto(url)
            # Nothing of them may still be calling the model when the next test counts its requests.
            pages.end_debate(owner)


def test_a_refused_form_keeps_what_was_typed(pages, site):
    page = pages.new("carol")
    page.goto(site + "/debates/new/")
    page.fill("#id_topic", "Should homework be banned?")
    page.fill("#id_premise", "Homework should be banned")
    page.select_option("#id_seat_a", label="Ada Sterling (debater)")
    page.select_option("#id_seat_b", label="Ada Sterling (debater)")
    page.click("button.primary")
    page.wait_for_selector(".error-summary")
    assert "Choose another persona, as Ada Sterling already sits in" in page.inner_text(".error-summary")
    assert page.input_value("#id_topic") == "Should homework be banned?"
    assert page.input_value("#id_premise") == "Homework should be banned"
    assert page.locator("#preview-a .prompt").inner_text().strip()  # the chosen persona's prompt, still shown


def test_every_problem_at_once_in_a_summary_that_takes_focus_and_leads_to_each_field(pages, site):
    page = pages.new("carol")
    page.goto(site + "/debates/new/")
    page.fill("#id_topic", "   ")
    page.select_option("#id_seat_a", label="Ada Sterling (debater)")
    page.select_option("#id_seat_b", label="Ada Sterling (debater)")
    page.click("button.primary")
    page.wait_for_selector(".error-summary")
    # The summary has the focus: a keyboard or screen-reader user lands on it, and hears its heading and list.
    assert page.evaluate("document.activeElement.id") == "error-summary"
    links = page.locator(".error-summary a")
    assert [links.nth(i).get_attribute("href") for i in range(links.count())] == ["#id_topic", "#id_seat_b"]
    assert "The topic must have at least one non-whitespace character." in links.nth(0).inner_text()
    # Tab, Enter: the first problem's link leads to its field, which takes the focus.
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.id === 'id_topic'")
    page.focus("#id_seat_b")
    screenshot(page, "new-debate-refused-1280")
    page.set_viewport_size({"width": 390, "height": 900})
    page.focus("#error-summary")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "new-debate-refused-390")


def test_logging_in_from_the_login_page_lands_on_the_home_page(pages, site):
    page = pages.new()
    page.goto(site + "/accounts/login/")
    page.click("header.topbar a:has-text('Log in')")
    page.wait_for_url(site + "/accounts/login/")
    page.fill("#id_username", "carol")
    page.fill("#id_password", "pw-carol-123")
    page.click("main button[type=submit]")
    page.wait_for_url(site + "/")
    assert "carol" in page.inner_text("header.topbar")
    # An old link that sends the login form back to itself goes home too.
    other = pages.new()
    other.goto(site + "/accounts/login/?next=/accounts/login/")
    other.fill("#id_username", "carol")
    other.fill("#id_password", "pw-carol-123")
    other.click("main button[type=submit]")
    other.wait_for_url(site + "/")
    # A page's own "Log in" still brings the person back to that page.
    third = pages.new()
    third.goto(site + "/rooms/")
    third.wait_for_url("**/accounts/login/?next=/rooms/")
    third.fill("#id_username", "carol")
    third.fill("#id_password", "pw-carol-123")
    third.click("main button[type=submit]")
    third.wait_for_url(site + "/rooms/")
