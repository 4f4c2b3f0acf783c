"""No text from a user or a model can run script in a viewer's browser."""

import subprocess
import sys

import pytest

from tests.browser.conftest import screenshot
from tests.browser.test_debate_pages import create
from tests.servers import ROOT

pytestmark = pytest.mark.browser

# Each payload, if it ran, would open a dialog or set window.__xss.
PAYLOADS = [
    "<script>alert(1)</script>",
    "<script>window.__xss=1</script>",
    "<img src=x onerror=alert(2)>",
    '<img src=x onerror="window.__xss=2">',
    "<svg onload=alert(3)>",
    "<svg><script>alert(4)</script></svg>",
    '<iframe src="javascript:alert(5)"></iframe>',
    "<body onload=alert(6)>",
    '<a href="javascript:alert(7)">click</a>',
    "[click me](javascript:alert(8))",
    "[x](JaVaScRiPt:alert(9))",
    "![img](javascript:alert(10))",
    "<details open ontoggle=alert(11)>",
    "<input autofocus onfocus=alert(12)>",
    "<video><source onerror=alert(13)></video>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(14)>",
    '"><script>alert(15)</script>',
    "'><img src=x onerror=alert(16)>",
    "</textarea><script>alert(17)</script>",
    "</title><script>alert(18)</script>",
    '<div hx-get="/" hx-trigger="load" hx-on::after-request="alert(19)">htmx</div>',
    '<div hx-on:click="alert(20)">htmx on</div>',
    '<a href="data:text/html,<script>alert(21)</script>">data</a>',
    '<object data="javascript:alert(22)"></object>',
    '<embed src="javascript:alert(23)">',
    '<form action="javascript:alert(24)"><button>go</button></form>',
    "<style>@import 'javascript:alert(25)';</style>",
    "<marquee onstart=alert(26)>x</marquee>",
    '<p style="background:url(javascript:alert(27))">x</p>',
    "`<script>alert(28)</script>`",
    "```html\n<script>alert(29)</script>\n```",
    '<base href="javascript:alert(30)//">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(31)">',
    "{{ 7|add:1 }} {% now 'Y' %} <template><script>alert(32)</script></template>",
]


def test_no_payload_runs_as_topic_persona_name_or_model_output(pages, site, site_env, llm):
    # Personas whose names are payloads (names are shown on the page).
    persona_file = ROOT / "test-artifacts" / "xss-personas.yaml"
    persona_file.parent.mkdir(exist_ok=True)
    persona_file.write_text(
        "---\n".join(
            f"name: {name!r}\nrole: debater\npersonality: {text!r}\n"
            for name, text in [
                ("Xa <img src=x onerror=alert(40)>", PAYLOADS[0]),
                ("Xb <script>alert(41)</script>", PAYLOADS[2]),
            ]
        )
    )
    subprocess.run(
        [sys.executable, "manage.py", "import_personas", str(persona_file), "--update"],
        cwd=ROOT,
        env=site_env,
        check=True,
        capture_output=True,
    )
    # Every model reply is a payload, in turn.
    llm.configure(rules=[{"reply": payload, "times": 1} for payload in PAYLOADS] * 2, latency=0.01)
    owner = pages.new("alice")
    topic = "<script>alert(50)</script> Tea <img src=x onerror=alert(51)>"
    create(
        owner,
        site,
        "duel",
        topic,
        {
            "a": "Xa <img src=x onerror=alert(40)> (debater)",
            "b": "Xb <script>alert(41)</script> (debater)",
            "judge": "Judge Ines Okafor (judge)",
        },
        {"turns": 6},
        premise="<svg onload=alert(52)>",
        visibility="public",
    )
    owner.wait_for_selector("#status.status-completed, #status.status-error", timeout=60_000)
    owner.reload()
    spectator = pages.new("bob")
    spectator.goto(owner.url)
    for page in (owner, spectator):
        page.wait_for_timeout(500)
        assert page.evaluate("window.__xss") is None
        # Only our three scripts exist; nothing a payload carried became an element with a handler.
        assert page.locator("script").count() == 3
        assert (
            page.eval_on_selector_all(
                "#transcript *, header *",
                "els => els.filter(e => "
                "[...e.attributes].some(a => a.name.startsWith('on') || "
                "a.name.startsWith('hx-on'))).length",
            )
            == 0
        )
        assert page.locator("#transcript a[href^='javascript'], #transcript iframe, #transcript img").count() == 0
    assert pages.dialogs == []
    shown = owner.eval_on_selector("#transcript", "e => e.textContent")  # collapsed private cards too
    assert "<script>alert(1)</script>" in shown  # shown as text, not run
    assert owner.inner_text("h1") == topic
    screenshot(owner, "xss")
