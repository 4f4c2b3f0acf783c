"""The home page and the top bar on a phone (issue 37, item 9): at 390 px each debate is a readable card (no topic
broken mid-word, no time cut off, nothing wider than the screen), and the logged-in bar takes at most two rows, its
account menu opened and used by keyboard; axe-clean at 390 and 1280 px."""

from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import screenshot
from tests.servers import ARTIFACTS, manage

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

# The rows of the top bar: its brand's and its shown nav items' middles, those within 12 px of each other on one row.
BAR_ROWS = """() => {
  const items = [document.querySelector(".topbar .brand"), ...document.querySelectorAll(".topbar nav > *")]
    .filter((e) => e.getClientRects().length);  // what this width hides takes no row
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

    # On a phone the kinds of batch are under "More", opened by keyboard; none is in the bar itself.
    assert not page.is_visible("header.topbar a:has-text('Tournaments')")
    page.focus(".nav-more summary")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Tournaments"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    screenshot(page, "home-390-more-menu")
    page.focus(".nav-more summary")
    page.keyboard.press("Enter")

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


FINISHED_WITH_A_VOTE = """
from django.contrib.auth.models import User
from django.utils import timezone
from debates.models import Debate, Event, Seat
d = Debate.objects.create(topic='Should cities ban cars?', format='duel', owner=User.objects.get(username='dave'),
    visibility='public', status='completed', audience_poll=True, winner='Ada', finished_at=timezone.now())
for i, (key, role, side, name) in enumerate([('a', 'debater', 'for', 'Ada'), ('b', 'debater', 'against', 'Bob'),
        ('judge', 'judge', '', 'Jo')]):
    Seat.objects.create(debate=d, key=key, role=role, side=side, name=name, order=i)
Event.objects.create(debate=d, ordinal=0, kind='HEADER', content=d.topic)
for n in range(1, 13):
    Event.objects.create(debate=d, seat=d.seats.get(key='ab'[n % 2]), ordinal=n, kind='TURN', step='opening',
        content='A long statement about cars and cities. ' * 40)
print(d.pk)
"""


def test_on_a_phone_the_vote_after_a_debate_is_one_link_away(pages, site, site_env):
    debate = manage(site_env, "shell", "-c", FINISHED_WITH_A_VOTE).split()[-1]
    page = pages.new()
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{site}/debates/{debate}/")
    link = page.locator(".vote-jump a")
    assert link.is_visible() and link.inner_text().startswith("Vote on this debate")
    assert page.evaluate("document.querySelector('#poll-box').getBoundingClientRect().top") > 3000
    page.screenshot(path=str(ARTIFACTS / "debate-vote-390-top.png"))
    page.focus(".vote-jump a")
    page.keyboard.press("Enter")
    page.wait_for_function("Math.abs(document.querySelector('#poll-box').getBoundingClientRect().top) < 5")
    page.screenshot(path=str(ARTIFACTS / "debate-vote-390-jumped.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{site}/debates/{debate}/")
    assert not page.is_visible(".vote-jump a") and page.is_visible("#poll-box")
    screenshot(page, "debate-vote-1280")
