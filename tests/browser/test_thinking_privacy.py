"""The owner's choice whether viewers read the private thinking, as a logged-out visitor at the share link
sees it in a real browser: the page, its live update when the owner changes the choice, and its export."""

import httpx2 as httpx
import pytest

from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser

SEATS = {"a": "Ada Sterling (debater)", "b": "Marcus Vale (debater)", "judge": "Judge Ines Okafor (judge)"}


def private_texts(base, page):
    """The private events' texts, from the owner's own export (which has everything)."""
    href = page.get_attribute("a[href$='export.md']", "href")
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    data = httpx.get(base + href.replace("export.md", "export.json"), cookies=cookies).json()
    return [e["content"] for e in data["events"] if e["kind"] in ("PLAN", "THINK")]


def axe_violations(page, selector):
    """axe-core's violations within `selector` (what this feature adds to the page)."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, context={"include": [[selector]]})
    return [(v["id"], v["help"]) for v in results.response["violations"]]


def share_export(base, share_url):
    return httpx.get(share_url.rstrip("/") + "/export.md").text


def test_the_share_page_logged_out_follows_the_owners_choice_and_its_export_agrees(pages, site, llm):
    llm.configure(latency=0.01, token_rate=400, reply_words=12)
    owner = pages.new("alice")
    owner.goto(site + "/debates/new/")
    assert owner.is_checked("#id_show_thinking")  # showing the thinking is the default
    owner.fill("#id_topic", "Is tea better than coffee?")
    for key, label in SEATS.items():
        owner.select_option(f"#id_seat_{key}", label=label)
    owner.fill("#id_option_turns", "2")
    owner.select_option("#id_visibility", "unlisted")
    owner.uncheck("#id_show_thinking")
    assert axe_violations(owner, "#id_show_thinking") == []
    owner.click("button.primary")
    owner.wait_for_url("**/debates/*/")
    owner.wait_for_selector("#status.status-completed", timeout=60_000)
    secrets = private_texts(site, owner)
    assert secrets and all(secrets)

    visitor = pages.new()
    visitor.goto(owner.input_value(".share-link"))
    assert "Log in" in visitor.inner_text("header.topbar")
    hidden = visitor.locator("#transcript > article.private")
    assert hidden.count() == len(secrets)
    assert visitor.locator("#transcript > article.private details").count() == 0
    assert "the debate's owner keeps it from viewers" in hidden.first.inner_text()
    page_html = visitor.content()
    assert not any(text[:40] in page_html for text in secrets)
    exported = share_export(site, visitor.url)
    assert "(private)" not in exported and not any(text[:40] in exported for text in secrets)
    assert axe_violations(visitor, "#transcript") == []
    screenshot(visitor, "share-thinking-hidden")
    assert axe_violations(owner, "form[action$='/thinking/']") == []
    # By keyboard alone: the owner's box and its button are reachable and work.
    owner.focus("input[name=show_thinking]")
    owner.keyboard.press("Space")
    assert owner.is_checked("input[name=show_thinking]")
    owner.keyboard.press("Space")

    # The owner shows it: the visitor's open page follows without a reload, and so does the export.
    owner.check("input[name=show_thinking]")
    owner.click("form[action$='/thinking/'] button[type=submit]")
    owner.wait_for_selector("text=Viewers see the private thinking")
    visitor.wait_for_function("() => document.querySelectorAll('#transcript > article.private details').length > 0")
    assert visitor.locator("#transcript > article.private details").count() == len(secrets)
    visitor.locator("#transcript > article.private summary").first.click()
    assert secrets[0][:40] in visitor.content()
    visitor.set_viewport_size({"width": 390, "height": 844})
    assert visitor.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scrolling on a phone
    exported = share_export(site, visitor.url)
    assert exported.count("(private)") == len(secrets) and all(text[:40] in exported for text in secrets)
    screenshot(visitor, "share-thinking-shown")
