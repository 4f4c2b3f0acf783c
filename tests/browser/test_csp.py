"""The content security policy in a real browser: every kind of page, and what each does (htmx requests,
swaps, websocket pushes, the copy and confirm behaviours), run under it with no violation reported.

The `pages` fixture fails any browser test whose pages report a violation; this one visits each kind.
"""

import httpx2 as httpx
import pytest

from tests.browser.conftest import manage, screenshot
from tests.browser.test_debate_pages import create
from tests.browser.test_rooms import open_room, say

pytestmark = pytest.mark.browser

POLICY = {
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
}


def test_every_page_is_sent_the_policy(site):
    for path in ("/", "/accounts/login/", "/tournaments/", "/admin/login/"):
        header = httpx.get(site + path).headers["content-security-policy"]
        assert {d.strip() for d in header.split(";")} == POLICY, path


def test_a_violation_is_seen(pages, site):
    """The check below can fail: an inline script added to a page is refused, and reported."""
    page = pages.new()
    page.goto(site + "/")
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = \"document.body.dataset.ran = 'yes'\"; document.body.append(s); }"
    )
    page.wait_for_timeout(300)
    assert page.get_attribute("body", "data-ran") is None
    assert any("script-src" in v for v in pages.csp_violations)
    pages.csp_violations.clear()


def test_every_kind_of_page_works_under_the_policy_with_no_violation(pages, site, site_env, llm):
    llm.configure(latency=0.05, token_rate=80, reply_words=12)
    manage(
        site_env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; "
        "User.objects.filter(username='csp-admin').exists() or "
        "User.objects.create_superuser('csp-admin', password='pw-csp-admin-123')",
    )
    anonymous = pages.new()
    for path in ("/", "/accounts/login/", "/tournaments/"):
        anonymous.goto(site + path)

    owner = pages.new("alice")
    # The new-debate form: changing the format swaps its fields in (htmx), a persona shows its prompt.
    owner.goto(site + "/debates/new/")
    owner.check("input[name=format][value=classic]")
    owner.wait_for_selector("#id_option_free_turns")
    owner.check("input[name=format][value=duel]")
    owner.wait_for_selector("#id_seat_judge")
    owner.select_option("#id_seat_a", label="Ada Sterling (debater)")
    owner.wait_for_selector(".prompt-preview, pre", state="attached")
    # A live duel: websocket pushes, tokens, the score chart's inline colours, the verdict.
    url = create(
        owner,
        site,
        "duel",
        "Is tea better than coffee?",
        {"a": "Ada Sterling (debater)", "b": "Marcus Vale (debater)", "judge": "Judge Ines Okafor (judge)"},
        {"turns": 2},
        visibility="unlisted",
    )
    owner.wait_for_selector("#verdict .winner", timeout=60_000)
    share_url = owner.input_value(".share-link")
    owner.click("[data-copy]")
    # New link asks first (a confirm from the page script, not an onsubmit attribute); dismissed, it keeps the link.
    owner.click("form[data-confirm] button:has-text('New link')")
    assert pages.dialogs[-1] == "Make a new link? The old one stops working."
    assert owner.input_value(".share-link") == share_url
    screenshot(owner, "csp-debate")
    spectator = pages.new()
    spectator.goto(share_url)
    spectator.wait_for_selector("#verdict .winner")
    assert url

    # A room: a message sent by htmx, the agents' answers pushed over the socket.
    open_room(owner, site, "Under the policy", ["Ada Sterling", "Mira"])
    say(owner, "Hello both")
    owner.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 2")
    assert owner.input_value("form.say textarea") == ""  # cleared by the page script once accepted
    owner.goto(site + "/rooms/")

    # Tournaments: the form's running estimate (htmx), a tournament's page with its progress bar.
    owner.goto(site + "/tournaments/new/")
    owner.fill("#id_name", "Policy league")
    owner.get_by_label("Ada Sterling").check()
    owner.get_by_label("Marcus Vale").check()
    owner.get_by_label("Judge Ines Okafor").check()
    owner.fill("#id_questions", "Is tea better than coffee?")
    owner.fill("#id_option_turns", "2")
    owner.locator("#id_questions").dispatch_event("keyup")
    owner.wait_for_selector("#estimate:has-text('LLM calls')")
    owner.click("button.primary")
    owner.wait_for_url("**/tournaments/*/")
    owner.wait_for_selector("#progress.status-completed", timeout=60_000)
    screenshot(owner, "csp-tournament")

    # The admin: its index, a list, a persona's page with its prompt preview, the import page.
    admin = pages.new()
    admin.goto(site + "/admin/login/")
    admin.fill("#id_username", "csp-admin")
    admin.fill("#id_password", "pw-csp-admin-123")
    admin.click("input[type=submit]")
    admin.wait_for_url(site + "/admin/")
    admin.goto(site + "/admin/personas/persona/")
    admin.click("#result_list tbody tr th a")
    admin.wait_for_selector(".prompt-preview")
    for path in ("/admin/personas/provider/add/", "/admin/debates/debate/", "/admin/rooms/room/"):
        admin.goto(site + path)
    admin.goto(site + "/")
    assert not pages.csp_violations, "\n".join(pages.csp_violations)
