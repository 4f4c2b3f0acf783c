"""A comparison in a real browser, as a person makes one: the new-comparison form filled in by keyboard alone (the
arithmetic sample, three arms each with its own agents and rounds, the persona), its running estimate with its
time, then its page: the progress pushed as runs finish and the results tables, read against what the scripted
agents answered; both pages axe-clean at 1280 and 390 px, and no wider than a phone."""

from __future__ import annotations

import json
import math
import re
import sqlite3

import pytest

from comparisons.arithmetic import generate
from tests.browser.conftest import assert_clean, manage, screenshot
from tests.comparisons.helpers import wilson
from tests.servers import ROOT

pytestmark = pytest.mark.browser

QUESTIONS = generate(3, 1, 0)
# Every agent answers the first two questions right and the third wrong: each arm gets 2 of 3.
RIGHT = {QUESTIONS[0].id, QUESTIONS[1].id}


@pytest.fixture(scope="module")
def cards(site_env):
    manage(site_env, "import_formats", str(ROOT / "cards"), "--missing")


def answers() -> list[dict]:
    rules = []
    for q in QUESTIONS:
        given = q.answer if q.id in RIGHT else str(int(q.answer) + 1)
        reply = json.dumps({"reasoning": "worked out", "answer": given})
        rules.append({"match": "(?s)" + re.escape(q.question) + '.*"answer"', "reply": reply})
    return rules


def tab_to(page, target: str, limit: int = 80) -> None:
    """Press Tab until the focus is on the element of id `target` (or the button that says `target`)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(
            "t => document.activeElement.id === t || document.activeElement.textContent.trim() === t", target
        ):
            return
    raise AssertionError(f"Tab never reached {target}")


def type_over(page, text: str) -> None:
    page.keyboard.press("Control+A")
    page.keyboard.type(text)


def expected_time(site_env, calls: int, at_once: int) -> str:
    """The estimate's time as docs/experiments.md says it is reckoned: the mean of the site's latest 50 timed calls
    (read from its database here), else 4 s a call on a hosted endpoint; the calls divided among those at once."""
    database = site_env["DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(database) as db:
        recent = [
            row[0]
            for row in db.execute("SELECT latency_ms FROM debates_event WHERE latency_ms > 0 ORDER BY id DESC LIMIT 50")
        ]
    pace = sum(recent) / len(recent) / 1000 if recent else 4.0
    seconds = calls * pace / at_once
    minutes = math.ceil(seconds / 60)
    said = "under a minute" if seconds < 60 else f"about {minutes} minute{'' if minutes == 1 else 's'}"
    how = (
        f"at this site's recent pace, {pace:.1f} s a call"
        if recent
        else ("at a guess of 4.0 s a call for a hosted model: no call timed yet")
    )
    return f"It will take {said} ({at_once} call{'' if at_once == 1 else 's'} at once, {how})."


def test_a_comparison_made_by_keyboard_shows_its_progress_and_results(pages, site, site_env, cards, llm):
    # Each call takes half a second, one debate at a time: the page opens while runs are still to finish.
    llm.configure(rules=answers(), latency=0.5)
    page = pages.new("alice")
    page.goto(site + "/comparisons/new/")
    assert page.locator("h1").inner_text() == "New comparison"
    assert_clean(page, 1280)
    page.focus("#id_name")
    page.keyboard.type("Du et al. against a vote")
    tab_to(page, "id_sample")
    page.keyboard.type("Ar")
    tab_to(page, "id_count")
    type_over(page, "3")
    tab_to(page, "id_difficulty")
    type_over(page, "1")
    # The baselines fill the first two rows; the second seats 3 agents, its fewest. The third row is Du et al.'s.
    tab_to(page, "id_arm_3_format")
    page.keyboard.type("Mu")
    tab_to(page, "id_arm_3_name")
    page.keyboard.type("Du et al.")
    tab_to(page, "id_arm_3_agents")
    page.keyboard.type("3")
    tab_to(page, "id_arm_3_rounds")
    page.keyboard.type("1")
    tab_to(page, "id_persona")
    page.keyboard.type("Ada")
    tab_to(page, "id_concurrency")
    type_over(page, "1")
    assert [page.input_value(f"#id_arm_{n}_format") for n in (1, 2, 3, 4)] == [
        "single-agent",
        "self-consistency",
        "multi-agent-debate",
        "",
    ]
    assert page.input_value("#id_sample") == "arithmetic"
    assert page.locator("#id_persona option:checked").inner_text() == "Ada Sterling"
    # 3 questions x (1 + 3 + 3 agents x 2 answers) calls, one at a time.
    said = "This comparison will run 9 debates making 30 model calls. " + expected_time(site_env, 30, 1)
    estimate = page.locator("#estimate")
    estimate.filter(has_text=said).wait_for()  # the line follows the typing, a moment after it
    assert estimate.inner_text() == f"{said} Its cost is unknown: none of its models has a known price."
    assert estimate.locator(".duration").count() == 1
    screenshot(page, "comparison-new-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    assert_clean(page, 390)
    screenshot(page, "comparison-new-390")
    page.set_viewport_size({"width": 1280, "height": 900})

    tab_to(page, "Start the comparison")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/comparisons/\d+/$"))
    assert page.locator("h1").inner_text() == "Du et al. against a vote"
    arms = page.locator("ul.seats li").all_inner_texts()
    assert arms == [
        "single-agent single-agent · 1 seat",
        "self-consistency self-consistency · agents 3 · 3 seats",
        "Du et al. multi-agent-debate · rounds 1 · agents 3 · 3 seats",
    ]
    # The progress line counts runs as they finish, pushed to the open page: no reload.
    assert page.inner_text("#progress .t-total") == "9"
    assert int(page.inner_text("#progress .t-done")) < 9
    page.wait_for_selector("#progress.status-completed", timeout=120_000)
    assert page.inner_text("#progress .t-done") == "9" and page.inner_text("#progress .t-failed") == "0"
    page.wait_for_function(
        "() => [...document.querySelectorAll('#accuracy tbody tr')].map(r => r.cells[1].innerText).join() === '3,3,3'"
    )
    low, high = wilson(2, 3)
    interval = f"{100 * low:.0f}% to {100 * high:.0f}%"
    rows = [row.locator("td").all_inner_texts() for row in page.locator("#accuracy tbody tr").all()]
    firsts = [row[:8] for row in rows]
    assert firsts == [
        ["single-agent", "3", "2", "0", "67%", interval, "1.00", firsts[0][7]],
        ["self-consistency", "3", "2", "0", "67%", interval, "3.00", firsts[1][7]],
        ["Du et al.", "3", "2", "0", "67%", interval, "6.00", firsts[2][7]],
    ]
    assert [row[8:10] for row in rows] == [["unknown price", "unknown price"]] * 3
    assert [row[11] for row in rows] == ["no stop condition"] * 3
    pairs = [row.locator("td").all_inner_texts() for row in page.locator("#pairs tbody tr").all()]
    assert pairs == [
        ["single-agent vs self-consistency", "3", "2", "0", "0", "1", "0%", "1.00"],
        ["single-agent vs Du et al.", "3", "2", "0", "0", "1", "0%", "1.00"],
        ["self-consistency vs Du et al.", "3", "2", "0", "0", "1", "0%", "1.00"],
    ]
    # The runs' rows and the cost panel follow too, still without a reload: each run's answer, graded.
    page.wait_for_function(
        "() => [...document.querySelectorAll('#runs tbody tr')].every(r => r.cells[4].innerText !== '\u2013')"
    )
    runs = [row.locator("td").all_inner_texts() for row in page.locator("#runs tbody tr").all()]
    gold = [q.answer for q in QUESTIONS]
    assert [row[2:] for row in runs] == [
        [arm, gold[i], f"{gold[i]} · right" if i < 2 else f"{int(gold[i]) + 1} · wrong", "completed"]
        for i in range(3)
        for arm in ("single-agent", "self-consistency", "Du et al.")
    ]
    usage = page.locator("#batch-usage tbody tr").all()
    assert sum(int(row.locator("td").nth(2).inner_text()) for row in usage) == 30
    assert_clean(page, 1280)
    screenshot(page, "comparison-page-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    assert_clean(page, 390)
    screenshot(page, "comparison-page-390")
