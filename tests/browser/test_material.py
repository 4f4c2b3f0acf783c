"""A debate's material, chosen as a file on the new-debate form: folded above the transcript on its page and its share
page, shown as text when opened, and never run."""

import pytest

from tests.browser.conftest import assert_clean, screenshot
from tests.browser.test_xss import PAYLOADS

pytestmark = pytest.mark.browser

MATERIAL = "Question: which is older?\nA. The pyramids\nB. Oxford University\n\n" + "\n".join(PAYLOADS)


def test_material_from_a_file_is_folded_above_the_transcript_and_shown_as_text(pages, site, llm):
    llm.configure(latency=0.01, reply_words=8)
    owner = pages.new("alice")
    owner.goto(site + "/debates/new/")
    owner.fill("#id_topic", "Which is older?")
    owner.set_input_files(
        "#id_material_file", files=[{"name": "case.md", "mimeType": "text/markdown", "buffer": MATERIAL.encode()}]
    )
    owner.select_option("#id_seat_a", label="Ada Sterling (debater)")
    owner.select_option("#id_seat_b", label="Marcus Vale (debater)")
    owner.select_option("#id_seat_judge", label="— no judge —")
    owner.fill("#id_option_turns", "2")
    owner.select_option("#id_visibility", "unlisted")
    owner.click("button.primary")
    owner.wait_for_url("**/debates/*/")
    spectator = pages.new()
    spectator.goto(owner.input_value(".share-link"))
    for page in (owner, spectator):
        material = page.locator("details#material")
        assert material.get_attribute("open") is None  # folded until asked for
        assert not page.locator("#material .material-text").is_visible()
        page.click("#material summary")
        assert page.locator("#material .material-text").is_visible()
        assert page.eval_on_selector("#material .material-text", "e => e.textContent") == MATERIAL
        assert page.locator("#material .material-text *").count() == 0  # text only: no payload became an element
        assert page.evaluate(
            "() => document.querySelector('#material').compareDocumentPosition(document.querySelector('#transcript'))"
            " & Node.DOCUMENT_POSITION_FOLLOWING"
        )
        page.wait_for_selector("#status.status-completed", timeout=60_000)
        assert page.evaluate("window.__xss") is None
    assert pages.dialogs == []
    assert_clean(owner, 1300)
    spectator.set_viewport_size({"width": 390, "height": 800})
    assert_clean(spectator, 390)  # the material's long lines wrap on a phone
    screenshot(owner, "debate-material")
