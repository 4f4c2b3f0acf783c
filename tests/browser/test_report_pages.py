"""The tournament and experiment reports with finished work on them, at a 390-px phone and a 1280-px desktop:
axe-core finds no violation, and the charts are readable (every label inside its chart, none on another,
axes named, text at least 11 px on the screen). Screenshots go to test-artifacts/report-*.png."""

import json

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import manage, screenshot

pytestmark = pytest.mark.browser

PHONE, DESKTOP = 390, 1280
WIDTHS = [PHONE, DESKTOP]
NADIA = """name: Nadia Okonkwo-Barrington
role: debater
personality: Nadia argues from history.
"""
QUILL = """name: Judge Quill
role: judge
personality: Quill reads closely.
judging_criteria: Weigh each argument's logic.
"""
PASSAGES = [
    {
        "passage": "The ferry left at dawn. Only Ines Varga knew the cargo was salt.",
        "question": "Who knew what the ferry carried?",
        "answers": ["Ines Varga", "The captain"],
        "correct": 0,
    },
    {
        "passage": "The bridge was closed in 1990 and reopened in 1994 after repairs to its north pier.",
        "question": "When did the bridge reopen?",
        "answers": ["1990", "1994"],
        "correct": 1,
    },
    {
        "passage": "Mara planted beans in the east bed because the west bed flooded every spring.",
        "question": "Why did Mara plant in the east bed?",
        "answers": ["The west bed flooded", "The east bed was sunnier"],
        "correct": 0,
    },
]
# The judge's answers vary, so the calibration plot has points away from 50%.
ANSWERS = [
    {"match": "Give the probability that each answer is correct", "reply": reply, "probability": p}
    for reply, p in (('{"A": 0.9, "B": 0.1}', 0.3), ('{"A": 0.2, "B": 0.8}', 0.4), ('{"A": 0.65, "B": 0.35}', 0.5))
]


@pytest.fixture(scope="module")
def reports(site_env, _llm_server_process, tmp_path_factory):
    """Public paths of a finished tournament (three debaters, a panel of two) and a finished experiment (all four
    protocols), made through the CLI as a researcher would."""
    folder = tmp_path_factory.mktemp("reports")
    (folder / "nadia.yaml").write_text(NADIA)
    (folder / "quill.yaml").write_text(QUILL)
    (folder / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PASSAGES))
    (folder / "league.yaml").write_text(
        "name: Report league\ndebaters: [Ada Sterling, Marcus Vale, nadia.yaml]\n"
        "judges: [Judge Ines Okafor, quill.yaml]\n"
        "questions: ['Should cities ban private cars?', 'Is tea better than coffee?']\n"
        "options: {turns: 2}\nvisibility: public\n"
    )
    (folder / "study.yaml").write_text(
        "name: Report study\nquestions_file: passages.jsonl\n"
        "protocols: [evidence_debate, consultancy, blind, oracle]\n"
        "debaters: [Ada Sterling, Marcus Vale]\njudges: [Judge Ines Okafor]\n"
        "options: {rounds: 1}\nvisibility: public\n"
    )
    llm = _llm_server_process
    llm.reset()
    llm.configure(reply_words=12, rules=ANSWERS)
    manage(site_env, "tournament", "run", str(folder / "league.yaml"))
    manage(site_env, "experiment", "run", str(folder / "study.yaml"))
    llm.reset()
    found = manage(
        site_env,
        "shell",
        "-c",
        "from tournaments.models import Tournament; from experiments.models import Experiment; "
        "print(Tournament.objects.get(name='Report league').pk, Experiment.objects.get(name='Report study').pk)",
    )
    tournament, experiment = found.strip().splitlines()[-1].split()
    return {"tournament": f"/tournaments/{tournament}/", "experiment": f"/experiments/{experiment}/"}


def open_page(browser, site, path, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(site + path)
    page.wait_for_load_state("networkidle")
    return page


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["tournament", "experiment"])
def test_screenshots_of_the_reports(browser, site, reports, kind, width):
    page = open_page(browser, site, reports[kind], width)
    screenshot(page, f"report-{kind}-{width}")
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["tournament", "experiment"])
def test_axe_core_finds_no_violation_on_the_reports(browser, site, reports, kind, width):
    page = open_page(browser, site, reports[kind], width)
    # A table too wide for its panel scrolls in a region the keyboard reaches, each named for its table.
    regions = page.eval_on_selector_all("[role=region]", "els => els.map(e => e.getAttribute('aria-label'))")
    results = Axe().run(page)
    page.context.close()
    assert len(regions) == len(set(regions)), regions
    assert results.violations_count == 0, results.generate_report()


# For each chart: its size on screen, every text's box and on-screen font size, the boxes that overlap.
MEASURE = """svg => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent.trim(), left: r.left - box.left, right: r.right - box.left, top: r.top - box.top,
            bottom: r.bottom - box.top, px: parseFloat(getComputedStyle(t).fontSize) * scale};
  });
  const overlaps = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach(b => {
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 0.5 && h > 0.5) overlaps.push([a.text, b.text]);
  }));
  // A live push may replace the chart while it is measured: the caller measures again.
  const settled = svg.isConnected && texts.every(t => !Number.isNaN(t.px));
  return {settled, width: box.width, height: box.height, texts, overlaps,
          titles: [...svg.querySelectorAll('.axis-title')].map(t => t.textContent.trim())};
}"""
CHARTS = {
    "tournament": {
        "#leaderboard svg.forest": ["Rating (1 more: wins 73% of verdicts)"],
        "#head-to-head svg.matrix": [],
    },
    "experiment": {
        "#accuracy svg.accuracy-chart": ["Accuracy (dashed: 50%, a coin toss)"],
        "#calibration svg.reliability-chart": ["The judge's probability for A", "How often A was correct"],
    },
}


def measure(page, selector):
    for _ in range(40):
        chart = page.eval_on_selector(selector, MEASURE)
        if chart["settled"]:
            return chart
        page.wait_for_timeout(250)
    raise AssertionError(f"{selector} kept changing")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["tournament", "experiment"])
def test_the_charts_are_readable_at_phone_and_desktop_widths(browser, site, reports, kind, width):
    page = open_page(browser, site, reports[kind], width)
    for selector, titles in CHARTS[kind].items():
        chart = measure(page, selector)
        assert chart["titles"] == titles, selector
        assert len(chart["texts"]) >= 6, (selector, chart["texts"])
        for text in chart["texts"]:
            # Inside the chart (nothing cut at its edge), and at least 11 px on this screen.
            assert text["left"] >= -0.5 and text["right"] <= chart["width"] + 0.5, (selector, text)
            assert text["top"] >= -0.5 and text["bottom"] <= chart["height"] + 0.5, (selector, text)
            assert text["px"] >= 11, (selector, text)
        assert chart["overlaps"] == [], selector
    if kind == "tournament":
        # A name cut to fit beside its figures is whole in its row's tooltip.
        tooltips = page.eval_on_selector_all("#leaderboard svg.forest title", "els => els.map(e => e.textContent)")
        assert "Nadia Okonkwo-Barrington" in tooltips
        # The side panel's usage table fits its panel: no column hidden past its edge.
        usage = page.eval_on_selector("#batch-usage .table-scroll", "e => e.scrollWidth - e.clientWidth")
        assert usage <= 0
    page.context.close()
