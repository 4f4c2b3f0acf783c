"""A tournament in a real browser: created from the form with questions uploaded as CSV, its progress bar
moving live, its leaderboard read logged out through the share link."""

import time

import pytest

from tests.browser.conftest import screenshot

pytestmark = pytest.mark.browser

CSV = (
    b"topic,premise,correct\n"
    b"Should cities ban private cars?,Cities should ban private cars,\n"
    b"Is tea better than coffee?,,for\n"
    b"Should homework be banned?,,against\n"
)


def test_a_tournament_from_the_form_runs_live_and_its_leaderboard_is_shared(pages, site, llm):
    llm.configure(latency=0.08)
    owner = pages.new("alice")
    owner.goto(site + "/tournaments/new/")
    owner.fill("#id_name", "Browser league")
    owner.get_by_label("Ada Sterling").check()
    owner.get_by_label("Marcus Vale").check()
    owner.get_by_label("Judge Ines Okafor").check()
    owner.set_input_files(
        "#id_questions_file", files=[{"name": "questions.csv", "mimeType": "text/csv", "buffer": CSV}]
    )
    owner.fill("#id_option_turns", "2")
    owner.fill("#id_concurrency", "1")
    owner.select_option("#id_visibility", "unlisted")
    owner.locator("#id_concurrency").dispatch_event("change")
    # Before it starts, the form says what it will run: 3 questions x 2 sides, 14 calls a two-turn duel.
    owner.wait_for_selector("#estimate:has-text('6 duels and 0 judge replays: 6 debates, 84 LLM calls.')")
    owner.click("button.primary")
    owner.wait_for_url("**/tournaments/*/")
    # The progress bar moves as duels finish, pushed over the socket (no reload).
    seen = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        done = int(owner.inner_text("#progress .t-done"))
        if not seen or seen[-1] != done:
            seen.append(done)
        if done == 6:
            break
        time.sleep(0.05)
    assert seen[-1] == 6 and len(seen) >= 3, seen
    owner.wait_for_selector("#progress.status-completed")
    width = owner.eval_on_selector("#progress .bar-done", "e => e.style.width")
    assert width == "100.0%" or width == "100%"
    owner.wait_for_selector("#leaderboard table")
    # The matches table too (no reload): the rows drawn before their duels finished now link them, completed.
    owner.wait_for_function(
        "() => [...document.querySelectorAll('#matches tbody tr')].map(r => r.cells[4].innerText.trim())"
        ".join() === Array(6).fill('completed').join()",
        timeout=10_000,
    )
    screenshot(owner, "tournament-owner")
    share_url = owner.input_value(".share-link")

    visitor = pages.new()
    visitor.goto(share_url)
    names = visitor.eval_on_selector_all("#leaderboard td.name", "els => els.map(e => e.innerText)")
    assert sorted(names) == ["Ada Sterling", "Marcus Vale"]
    assert visitor.locator("#leaderboard svg.forest circle").count() == 2
    assert visitor.locator("#judges td.name").inner_text() == "Judge Ines Okafor"
    # One judge, no repeats: said so, not NaN.
    assert "— (one judge: panel figures compare two or more)" in visitor.inner_text("#judges")
    assert "undefined" not in visitor.inner_text("#judges")
    assert visitor.locator(".tournament-controls").count() == 0  # no owner controls for a visitor
    assert visitor.locator("a", has_text="Log in").count() == 1
    screenshot(visitor, "tournament-shared")


def test_the_forms_estimate_follows_typing_without_leaving_the_field(pages, site):
    owner = pages.new("alice")
    owner.goto(site + "/tournaments/new/")
    owner.get_by_label("Ada Sterling").check()
    owner.get_by_label("Marcus Vale").check()
    owner.get_by_label("Judge Ines Okafor").check()
    owner.locator("#id_questions").press_sequentially("Tea or coffee?\nCats or dogs?")
    # Two questions, both sides, one judge: 4 duels.
    owner.wait_for_selector("#estimate:has-text('4 duels and 0 judge replays: 4 debates')")
    before = owner.inner_text("#estimate")
    # Typing a number changes the estimate while the cursor is still in the field (no blur, no change event).
    owner.locator("#id_option_turns").fill("")
    owner.locator("#id_option_turns").press_sequentially("2")
    # 4T + 6 calls a duel of T turns: 14 for two.
    owner.wait_for_selector("#estimate:has-text('4 duels and 0 judge replays: 4 debates, 56 LLM calls.')")
    assert owner.evaluate("document.activeElement.id") == "id_option_turns"
    assert owner.inner_text("#estimate") != before
