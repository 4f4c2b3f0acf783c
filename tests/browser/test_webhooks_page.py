"""The webhooks page in Chromium, by keyboard: a refused address keeps what was typed with the reason; an allowed
one shows its signing secret once; a finished debate's delivery shows in the log (status, attempts, last
error) and is sent again with Redeliver. Axe-clean, and it fits a phone."""

import time

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.api.receiver import Receiver
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser


def _token(page, site: str) -> str:
    page.goto(site + "/account/tokens/")
    page.fill("#id_name", "webhooks test")
    page.check("input[name=access][value=write]")
    page.click("button.primary")
    return page.input_value(".new-token")


def _axe_clean(page) -> None:
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()


def band_above_heading(page) -> float:
    """Pixels between the top of the panel that shows a new secret and the top of its heading."""
    return page.evaluate(
        "(() => { const panel = document.querySelector('.new-secret-panel');"
        " return panel.querySelector('h2').getBoundingClientRect().top - panel.getBoundingClientRect().top; })()"
    )


def test_the_webhooks_page_by_keyboard_with_its_delivery_log(pages, site, llm):
    llm.configure(latency=0.0, reply_words=6)
    receiver = Receiver(script=[200])
    try:
        page = pages.new("bob")
        token = _token(page, site)
        page.goto(site + "/account/webhooks/")
        assert "You have no webhooks yet." in page.inner_text("main")
        _axe_clean(page)

        # A loopback address not allowed by the server's setting: refused, what was typed kept.
        page.focus("#id_url")
        page.keyboard.type("http://127.0.0.2:9/hook")
        page.keyboard.press("Tab")  # the first event: a debate finished, checked already
        page.keyboard.press("Tab")
        page.keyboard.press("Space")  # a debate failed, too
        page.click("button.primary")
        page.wait_for_selector("#webhook-error")
        assert (
            "127.0.0.2 is a loopback address: webhooks go to public addresses only, or to networks the site's "
            "setting CHAOSLM_WEBHOOKS_ALLOW_NETWORKS names (add 127.0.0.2/32 to it to allow this one)."
        ) in page.inner_text("#webhook-error")
        # The help says what the server's setting allows (127.0.0.1/32 in tests/browser/conftest.py).
        assert "CHAOSLM_WEBHOOKS_ALLOW_NETWORKS: 127.0.0.1/32" in page.inner_text("#url-help")
        assert page.input_value("#id_url") == "http://127.0.0.2:9/hook"
        assert page.is_checked("input[value='debate.failed']")
        _axe_clean(page)

        page.fill("#id_url", receiver.url)
        page.focus("button.primary")
        page.keyboard.press("Enter")
        page.wait_for_selector(".new-secret")
        secret = page.input_value(".new-secret")
        assert len(secret) >= 24
        # The panel with the secret has the focus, and no empty band above its heading.
        assert page.evaluate("document.activeElement.classList.contains('new-secret-panel')")
        assert band_above_heading(page) <= 16
        assert receiver.url in page.inner_text(".webhook-list")
        assert "debate.failed, debate.finished" in page.inner_text(".webhook-list")
        _axe_clean(page)
        screenshot(page, "webhooks-new-1280")

        # A debate of bob's finishes: its delivery is logged.
        with httpx.Client(base_url=site + "/api/v1", headers={"Authorization": f"Bearer {token}"}) as client:
            found = {p["name"]: p["id"] for p in client.get("/personas").json()}
            seats = {"a": found["Ada Sterling"], "b": found["Marcus Vale"]}
            made = client.post("/debates", json={"topic": "Tea?", "seats": seats, "options": {"turns": 1}})
            assert made.status_code == 201, made.text
        deadline = time.monotonic() + 60
        while not receiver.received:
            assert time.monotonic() < deadline, "no delivery"
            time.sleep(0.1)
        page.goto(site + "/account/webhooks/")
        assert not page.query_selector(".new-secret")  # the secret was shown once
        row = page.inner_text(".deliveries tbody tr")
        assert "debate.finished" in row and "delivered (HTTP 200)" in row
        _axe_clean(page)
        screenshot(page, "webhooks-log-1280")

        # Redeliver, by keyboard.
        page.focus(".deliveries button")
        page.keyboard.press("Enter")
        page.wait_for_selector("text=is being sent again")
        deadline = time.monotonic() + 30
        while len(receiver.received) < 2:
            assert time.monotonic() < deadline, "no redelivery"
            time.sleep(0.1)
        assert receiver.received[1].body == receiver.received[0].body

        page.set_viewport_size({"width": 390, "height": 900})
        wide = page.evaluate(
            "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391)"
            ".filter(e => !e.closest('.table-scroll')).map(e => e.tagName + '.' + e.className).slice(0, 5)"
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide
        _axe_clean(page)
        screenshot(page, "webhooks-log-390")
    finally:
        receiver.close()
