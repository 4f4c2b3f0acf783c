"""Browser tests: a real ChaosLM server (daphne, via runserver) in a subprocess, driven by Playwright in
Debian's Chromium, with the OpenAI-compatible test server behind it. Screenshots go to test-artifacts/."""

import os
import shutil

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.conftest import require
from tests.servers import ARTIFACTS, manage, running_site

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
USERS = {"alice": "pw-alice-123", "bob": "pw-bob-123", "carol": "pw-carol-123", "dave": "pw-dave-123"}


@pytest.fixture(scope="session")
def site_env(tmp_path_factory, _llm_server_process):
    folder = tmp_path_factory.mktemp("site")
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder}/site.sqlite3",
        "OPENAI_BASE_URL": _llm_server_process.url,
        "OPENAI_API_KEY": "browser-tests",
        "CHAOSLM_DEFAULT_MODEL": "test-model",
        "CHAOSLM_TRANSCRIPTS_DIR": str(folder / "transcripts"),
        "CHAOSLM_DEBUG": "true",
        "CHAOSLM_LLM_TIMEOUT": "10",
        "CHAOSLM_LOG_LEVEL": "WARNING",
        # The webhooks page's test receiver listens on this machine.
        "CHAOSLM_WEBHOOKS_ALLOW_NETWORKS": "127.0.0.1/32",
    }
    manage(env, "migrate", "--noinput")
    manage(env, "import_personas", "personas/samples/")
    create = "; ".join(f"User.objects.create_user({name!r}, password={password!r})" for name, password in USERS.items())
    manage(env, "shell", "-c", f"from django.contrib.auth.models import User; {create}")
    return env


@pytest.fixture(scope="session")
def site(site_env):
    """The base URL of a running ChaosLM."""
    with running_site(site_env, "server") as base:
        yield base


# Module scope: Playwright's sync API keeps an event loop running in this thread while it is open,
# which would break asyncio.run() in the tests that follow.
@pytest.fixture(scope="module")
def browser():
    require(os.path.exists(CHROMIUM), "Chromium (/usr/bin/chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def llm(_llm_server_process):
    _llm_server_process.reset()
    return _llm_server_process


class Pages:
    """New browser contexts (separate cookies), logged in or not, that record any dialog a page opens and
    every Content Security Policy violation Chromium reports (on its console, which outlives navigations)."""

    def __init__(self, browser, base):
        self.browser = browser
        self.base = base
        self.contexts = []
        self.dialogs = []
        self.csp_violations = []
        self.accept_dialogs = False  # a test that means to go through with End or Delete says yes to the confirm

    def new(self, user=None):
        context = self.browser.new_context(viewport={"width": 1300, "height": 900})
        self.contexts.append(context)
        page = context.new_page()
        page.on("dialog", self._answer)
        page.on("console", lambda message: self._note_csp(page, message))
        page.set_default_timeout(30_000)
        if user:
            page.goto(self.base + "/accounts/login/")
            page.fill("#id_username", user)
            page.fill("#id_password", USERS[user])
            page.click("button[type=submit]")
            page.wait_for_url(self.base + "/")
        return page

    def _answer(self, dialog):
        self.dialogs.append(dialog.message)
        if self.accept_dialogs:
            dialog.accept()
        else:
            dialog.dismiss()

    def end_debate(self, page):
        """Click End and answer yes to its confirm, as a person going through with it does."""
        accepting, self.accept_dialogs = self.accept_dialogs, True
        try:
            page.click("#controls button.when-active")
            page.wait_for_selector("#status:not(.status-running)", timeout=60_000)
        finally:
            self.accept_dialogs = accepting

    def _note_csp(self, page, message):
        if "Content Security Policy" in message.text:
            self.csp_violations.append(f"{page.url}: {message.text}")

    def close(self):
        for context in self.contexts:
            context.close()


@pytest.fixture
def pages(browser, site):
    opened = Pages(browser, site)
    yield opened
    opened.close()
    # Every page a browser test opens runs under the site's content security policy: nothing it does may
    # need an inline script, a handler attribute, eval, a <style> block or a foreign origin.
    assert not opened.csp_violations, "\n".join(opened.csp_violations)


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def visitor(browser, width: int):
    """A page in a new context (an anonymous visitor) `width` pixels wide."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    return page


def vote_by_keyboard(page, first: str, choice_index: int, button: str) -> None:
    """An arena's vote, from the skip link: Enter on it, Tab into the options (the first's value is `first`), Space
    and arrows to choose, Tab to the button (its text is `button`), Enter; then the reveal."""
    page.focus("a[href='#arena-vote']")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.value") == first
    page.keyboard.press("Space")
    for _ in range(choice_index):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == button
    page.keyboard.press("Enter")
    page.wait_for_selector("#arena-reveal")


def assert_clean(page, width: int) -> None:
    """Axe finds nothing, and a phone-wide page does not scroll sideways."""
    # After a resize or a push, as a person sees it: the page's own resize and swap handlers (which make a box that
    # scrolls a region the keyboard reaches) run in the next frames.
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    if width == 390:
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
