"""Every kind of page, as a person uses it: axe-core finds no violation, nothing is wider than a 390-px
phone, and the debate, room and tournament pages are photographed at 390 and 1280 px (test-artifacts/)."""

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import USERS, manage, screenshot
from tests.browser.test_debate_pages import create
from tests.browser.test_rooms import open_room

pytestmark = pytest.mark.browser

ADMIN = ("axe-admin", "pw-axe-admin-123")
PHONE, DESKTOP = 390, 1280
CSV = b"topic,premise,correct\nShould cities ban private cars?,Cities should ban private cars,\n"


def log_in(page, base, username, password):
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
    page.wait_for_url(base + "/")


def new_page(browser, base, user=None, width=DESKTOP):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    if user == "admin":
        log_in(page, base, *ADMIN)
    elif user:
        log_in(page, base, user, USERS[user])
    return page


@pytest.fixture(scope="module")
def urls(browser, site, site_env, _llm_server_process):
    """One of each kind of page, with something on it: {kind: (path, who views it)}."""
    manage(
        site_env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; "
        f"User.objects.filter(username={ADMIN[0]!r}).exists() or "
        f"User.objects.create_superuser({ADMIN[0]!r}, password={ADMIN[1]!r})",
    )
    llm = _llm_server_process
    llm.reset()
    llm.configure(latency=0.02, token_rate=200, reply_words=30)
    page = new_page(browser, site, "carol")
    debate = create(
        page,
        site,
        "duel",
        "Should cities ban private cars?",
        {"a": "Ada Sterling (debater)", "b": "Marcus Vale (debater)", "judge": "Judge Ines Okafor (judge)"},
        {"turns": 2},
        premise="Cities should ban private cars",
        visibility="unlisted",
    )
    page.wait_for_selector("#status.status-completed", timeout=90_000)
    share = page.input_value(".share-link")

    open_room(page, site, "Cars and cities", ["Ada Sterling", "Marcus Vale"])
    room = page.url
    page.fill("form.say textarea", "What should cities do about cars?")
    page.click("form.say button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 2")
    page.locator("#pending .msg-pending input[name=keep]").first.uncheck()  # one answer joins faded
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#messages .msg-agent.inactive').length === 1")
    page.select_option("select[name=visibility]", "unlisted")
    page.click("form:has(select[name=visibility]) button")
    page.wait_for_selector(".share-link")
    room_share = page.input_value(".share-link")

    page.goto(site + "/tournaments/new/")
    page.fill("#id_name", "Phone league")
    for name in ("Ada Sterling", "Marcus Vale", "Judge Ines Okafor"):
        page.get_by_label(name).check()
    page.set_input_files("#id_questions_file", files=[{"name": "q.csv", "mimeType": "text/csv", "buffer": CSV}])
    page.fill("#id_option_turns", "2")
    page.select_option("#id_visibility", "unlisted")
    page.click("button.primary")
    page.wait_for_url("**/tournaments/*/")
    tournament = page.url
    page.wait_for_selector("#progress.status-completed", timeout=90_000)
    tournament_share = page.input_value(".share-link")
    page.context.close()
    llm.reset()
    return {
        "home, logged out": ("/", None),
        "home, logged in": ("/", "carol"),
        "login": ("/accounts/login/", None),
        "new debate": ("/debates/new/", "carol"),
        "debate": (debate.removeprefix(site), "carol"),
        "share page": (share.removeprefix(site), None),
        "rooms": ("/rooms/", "carol"),
        "room": (room.removeprefix(site), "carol"),
        "room's share page": (room_share.removeprefix(site), None),
        "tournaments": ("/tournaments/", "carol"),
        "tournament": (tournament.removeprefix(site), "carol"),
        "tournament's share page": (tournament_share.removeprefix(site), None),
        "tournament form": ("/tournaments/new/", "carol"),
        "persona in the admin": ("/admin/personas/persona/1/change/", "admin"),
        "API reference": ("/api/v1/docs", None),
    }


KINDS = [
    "home, logged out",
    "home, logged in",
    "login",
    "new debate",
    "debate",
    "share page",
    "rooms",
    "room",
    "room's share page",
    "tournaments",
    "tournament",
    "tournament's share page",
    "tournament form",
    "persona in the admin",
    "API reference",
]


@pytest.mark.parametrize("kind", KINDS)
def test_axe_core_finds_no_violation(browser, site, urls, kind):
    path, user = urls[kind]
    page = new_page(browser, site, user)
    page.goto(site + path)
    page.wait_for_load_state("networkidle")
    results = Axe().run(page)
    page.context.close()
    assert results.violations_count == 0, results.generate_report()


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
@pytest.mark.parametrize("kind", ["room", "room's share page"])
def test_axe_core_finds_no_violation_on_the_room_pages_with_a_faded_answer_at_both_widths(
    browser, site, urls, kind, width
):
    path, user = urls[kind]
    page = new_page(browser, site, user, width=width)
    page.goto(site + path)
    page.wait_for_load_state("networkidle")
    assert page.locator("#messages .msg-agent.inactive").count() == 1
    results = Axe().run(page)
    page.context.close()
    assert results.violations_count == 0, results.generate_report()


@pytest.mark.parametrize("kind", KINDS)
def test_no_page_is_wider_than_a_phone(browser, site, urls, kind):
    path, user = urls[kind]
    page = new_page(browser, site, user, width=PHONE)
    page.goto(site + path)
    page.wait_for_load_state("networkidle")
    width = page.evaluate("document.documentElement.scrollWidth")
    # For the failure message: the outermost elements that stick out past the right edge.
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
          .filter(e => e.getBoundingClientRect().right > innerWidth + 1
                       && e.parentElement.getBoundingClientRect().right <= innerWidth + 1)
          .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + [...e.classList].join('.')
                    + ' ' + Math.round(e.getBoundingClientRect().right))"""
    )
    # What is wider scrolls in its own box, which the keyboard can reach and a screen reader can name.
    boxes = page.eval_on_selector_all(
        ".table-scroll",
        "els => els.filter(e => e.scrollWidth > e.clientWidth)"
        ".map(e => [e.tabIndex, e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || ''])",
    )
    page.context.close()
    assert width <= PHONE, f"{kind}: {width} px wide: {wide}"
    assert all(tab == 0 and name for tab, name in boxes), boxes


@pytest.mark.parametrize("kind", ["debate", "room", "tournament"])
def test_screenshots_at_phone_and_desktop_widths(browser, site, urls, kind):
    path, user = urls[kind]
    for width in (PHONE, DESKTOP):
        page = new_page(browser, site, user, width=width)
        page.goto(site + path)
        page.wait_for_load_state("networkidle")
        screenshot(page, f"{kind}-{width}")
        page.context.close()


def test_the_keyboard_skips_the_top_bar_and_sees_where_it_is(browser, site, urls):
    page = new_page(browser, site, "carol")
    page.goto(site + urls["debate"][0])
    page.keyboard.press("Tab")
    skip = page.locator(":focus")
    assert skip.inner_text() == "Skip to content" and skip.is_visible()
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # our own focus ring, not the browser's default
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"
    # The next Tab goes into the page, past the top bar's links.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('main') !== null")
    page.context.close()


def test_the_new_debate_form_by_keyboard(browser, site):
    page = new_page(browser, site, "carol")
    page.goto(site + "/debates/new/")
    assert page.evaluate("document.activeElement.id") == "id_topic"  # type the topic straight away
    assert page.locator("#id_seat_judge option:checked").inner_text() == "Judge Ines Okafor (judge)"
    assert page.locator("#preview-judge .prompt").is_visible()  # the preselected judge's prompt
    page.select_option("#id_seat_a", label="Ada Sterling (debater)")
    page.wait_for_selector("#preview-a .prompt")
    # From one picker the next Tab reaches the next picker: a preview is no tab stop of its own.
    page.focus("#id_seat_a")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_seat_b"
    page.context.close()
