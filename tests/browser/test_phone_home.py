"""The home page and the top bar on a phone (issue 37, item 9): at 390 px each debate is a readable card (no topic
broken mid-word, no time cut off, nothing wider than the screen), and the logged-in bar takes at most two rows, its
account menu opened and used by keyboard; axe-clean at 390 and 1280 px."""

from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import screenshot
from tests.servers import manage

TOPICS = (
    "Should municipal governments subsidise public transportation infrastructure?",
    "Is remote work better for productivity than working in an office?",
    "Tea or coffee?",
)

# Every word of every topic cell on one line: a word broken across lines has more than one box.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("table.debates td:first-child a")) {
    const text = cell.firstChild;
    for (const match of text.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(text, match.index);
      range.setEnd(text, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      if (lines.size > 1) broken.push(match[0]);
    }
  }
  return broken;
}"""

CLIPPED = """() => [...document.querySelectorAll("table.debates td")]
  .filter((td) => td.scrollWidth > td.clientWidth + 1 || td.getBoundingClientRect().right > innerWidth)
  .map((td) => td.textContent.trim())"""

# The rows of the top bar: its brand's and its nav items' middles, those within 12 px of each other on one row.
BAR_ROWS = """() => {
  const items = [document.querySelector(".topbar .brand"), ...document.querySelectorAll(".topbar nav > *")];
  const middles = items.map((e) => { const r = e.getBoundingClientRect(); return (r.top + r.bottom) / 2; });
  const rows = [];
  for (const y of middles.sort((a, b) => a - b)) if (!rows.length || y - rows[rows.length - 1] > 12) rows.push(y);
  return rows.length;
}"""


def seed(site_env) -> None:
    made = "; ".join(
        f"Debate.objects.create(topic={topic!r}, format='duel', status='completed', visibility='public', "
        "owner=User.objects.get(username='dave'))"
        for topic in TOPICS
    )
    manage(
        site_env,
        "shell",
        "-c",
        f"from django.contrib.auth.models import User; from debates.models import Debate; {made}",
    )


def test_the_home_page_and_bar_fit_a_phone_and_work_by_keyboard(pages, site, site_env):
    seed(site_env)
    page = pages.new("dave")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(site + "/")
        page.wait_for_selector("table.debates")
        screenshot(page, f"home-{width}")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.evaluate(BROKEN_WORDS) == []
        assert page.evaluate(CLIPPED) == []
        assert page.evaluate(BAR_ROWS) <= (1 if width == 1280 else 2)
        for topic in TOPICS:
            assert page.is_visible(f"table.debates a:has-text('{topic}')")
        results = Axe().run(page)
        assert results.violations_count == 0, results.generate_report()

    # The account menu by keyboard: its name opens it, Tab reaches its links, and it is clean open too.
    assert not page.is_visible("text=API tokens")
    page.focus(".account-menu summary")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Spend"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "API tokens"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    screenshot(page, "home-390-account-menu")
    page.keyboard.press("Enter")
    page.wait_for_url(site + "/account/tokens/")
