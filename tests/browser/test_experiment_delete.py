"""Deleting a running experiment in a real browser, by keyboard alone: the disclosure is the confirmation, the run
stops (no further call reaches the model), the list says so, and its page and share link are gone."""

import time

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def test_the_owner_deletes_a_running_experiment_by_keyboard(pages, site, llm):
    llm.configure(latency=0.3, token_rate=50, reply_words=20)
    owner = pages.new("alice")
    owner.goto(site + "/experiments/new/")
    owner.fill("#id_name", "Doomed study")
    owner.get_by_label("Use the sample set (twelve short passages) instead of a file").check()
    owner.get_by_label("Ada Sterling").check()
    owner.get_by_label("Marcus Vale").check()
    owner.get_by_label("Judge Ines Okafor").check()
    owner.fill("#id_concurrency", "2")
    owner.select_option("#id_visibility", "unlisted")  # private by default: no share link to follow
    owner.click("button.primary")
    owner.wait_for_url("**/experiments/*/")
    page_url = owner.url
    share_url = owner.input_value(".share-link")
    deadline = time.monotonic() + 60
    while not llm.requests:
        assert time.monotonic() < deadline, "the experiment did not start"
        time.sleep(0.1)

    summary = owner.locator("summary", has_text="Delete…")
    summary.focus()
    owner.keyboard.press("Enter")
    delete = owner.get_by_role("button", name="Delete the experiment")
    assert delete.is_visible()
    assert [v["id"] for v in Axe().run(owner).response["violations"]] == []
    summary.scroll_into_view_if_needed()
    owner.screenshot(path=str(ARTIFACTS / "experiment-delete.png"))
    owner.set_viewport_size({"width": 390, "height": 844})
    assert owner.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    summary.scroll_into_view_if_needed()
    owner.screenshot(path=str(ARTIFACTS / "experiment-delete-phone.png"))

    delete.focus()
    owner.keyboard.press("Enter")
    owner.wait_for_url("**/experiments/")
    assert owner.inner_text(".messages") == "Experiment deleted, with its runs' debates."
    assert "Doomed study" not in owner.inner_text("main")
    time.sleep(1)  # a call already on its way when it was deleted
    calls = len(llm.requests)
    time.sleep(2)
    assert len(llm.requests) == calls
    assert owner.goto(page_url).status == 404
    assert pages.new().goto(share_url).status == 404
