"""The API's pages in Chromium: its reference (/api/v1/docs) loads nothing from elsewhere under the content security
policy, and it and the account's API tokens page are axe-clean, usable by keyboard, and fit a phone."""

import re

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import screenshot
from tests.browser.test_webhooks_page import band_above_heading
from tests.servers import ARTIFACTS

pytestmark = pytest.mark.browser


def test_the_api_docs_load_under_the_policy_with_nothing_from_another_origin(pages, site):
    page = pages.new()
    origins = set()
    page.on("request", lambda request: origins.add(re.match(r"^[a-z]+://[^/]+", request.url).group(0)))
    page.goto(site + "/api/v1/docs")
    page.wait_for_selector("text=Create and start a debate")
    page.wait_for_selector("text=Get a debate")
    assert origins <= {site, "data:"}, origins
    # The `pages` fixture fails the test on any CSP violation the page reported.


def test_the_api_docs_are_axe_clean_usable_by_keyboard_and_fit_a_phone(pages, site):
    page = pages.new()
    page.goto(site + "/api/v1/docs")
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    # From the skip link into the list of operations: Enter on one goes to it, and so on to its body's schema.
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.locator(".api-toc a[href='#op-api_debates_create_debate']").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("location.hash === '#op-api_debates_create_debate'")
    assert page.locator("#op-api_debates_create_debate h3").is_visible()
    page.locator("#op-api_debates_create_debate a[href='#schema-DebateIn']").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("location.hash === '#schema-DebateIn'")
    assert page.locator("#schema-DebateIn").is_visible()
    # The page is a hundred screens long: its first screen and an operation's, not the whole of it.
    view(page, "api-docs-1280")
    page.goto(site + "/api/v1/docs")
    view(page, "api-docs-top-1280")
    page.set_viewport_size({"width": 390, "height": 900})
    wide = page.evaluate(
        "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391)"
        ".map(e => e.tagName + '.' + e.className).slice(0, 5)"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    view(page, "api-docs-top-390")
    page.goto(site + "/api/v1/docs#op-api_debates_list_debates")
    view(page, "api-docs-390")


def view(page, name: str) -> None:
    """What the window shows (test-artifacts/`name`.png)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_the_tokens_page_by_keyboard_is_axe_clean_and_fits_a_phone(pages, site):
    page = pages.new("alice")
    page.goto(site + "/account/tokens/")
    page.focus("#id_name")
    page.keyboard.type("keyboard token")
    page.keyboard.press("Tab")  # the first access choice: read only
    page.keyboard.press("ArrowDown")  # read and write
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector(".new-token")
    secret = page.input_value(".new-token")
    assert secret.startswith("chaoslm_")
    # The focus is on the new token's panel, not the page's top; Tab reaches the token, then its Copy button.
    assert page.evaluate("document.activeElement.classList.contains('new-secret-panel')")
    assert band_above_heading(page) <= 16  # the card's padding, no empty band above the heading
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.classList.contains('new-token')")
    assert "read and write" in page.inner_text(".token-list")
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    screenshot(page, "api-tokens-1280")
    page.set_viewport_size({"width": 390, "height": 900})
    wide = page.evaluate(
        "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391)"
        ".map(e => e.tagName + '.' + e.className).slice(0, 5)"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide
    screenshot(page, "api-tokens-390")
