"""The web process restarted mid-debate: an open page reconnects and catches up, nothing lost or doubled."""

import time

import pytest

from tests.browser.conftest import browser  # noqa: F401 - the shared headless Chromium fixture

pytestmark = [pytest.mark.scaleout, pytest.mark.browser]


def test_an_open_page_survives_a_web_restart(stack, _llm_server_process, browser):  # noqa: F811
    _llm_server_process.configure(latency=0.4, token_rate=30, reply_words=12)
    base = stack.start_web()
    port = int(base.rsplit(":", 1)[1])
    web = stack.workers[-1]
    stack.start_worker("w", threads=2)
    debate_id = stack.enqueue_duel("Does a restart lose anything?", turns=4)
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{base}/debates/{debate_id}/")
    page.wait_for_function("() => document.querySelectorAll('#transcript [data-event-id]').length >= 4")
    stack.kill(web)  # the web process dies; the worker goes on
    time.sleep(3)
    stack.start_web(port)
    page.wait_for_selector("#status.status-completed", timeout=120_000)
    shown = page.eval_on_selector_all("#transcript > article", "els => els.map(e => Number(e.dataset.ordinal))")
    exported = [e["ordinal"] for e in stack.transcript(debate_id)["events"] if e["kind"] != "INTERNAL"]
    assert sorted(shown) == exported  # every event, once
    assert page.locator(".card.writing").count() == 0
    context.close()
