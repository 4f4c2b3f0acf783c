"""A page whose socket is cut mid-turn reconnects by itself and catches up: the text of the turn being
written included, nothing lost, nothing twice, and no reload."""

import pytest

from tests.browser.conftest import screenshot
from tests.browser.test_debate_pages import create

pytestmark = pytest.mark.browser

# Keeps, for each card being written, its streamed text as it stood when the saved card replaced it.
RECORD_STREAMS = """() => {
  window.streamed = {};
  window.notReloaded = true;
  new MutationObserver((mutations) => {
    for (const mutation of mutations) for (const node of mutation.removedNodes) {
      const stream = node.querySelector && node.querySelector(".stream");
      if (stream) window.streamed[node.dataset.ordinal] = stream.textContent;
    }
  }).observe(document.getElementById("transcript"), {childList: true});
}"""

ARTICLES = "els => els.map(e => [Number(e.dataset.ordinal), e.outerHTML]).sort((a, b) => a[0] - b[0])"


def words(text):
    return text.split()


def test_a_socket_cut_mid_turn_reconnects_and_the_page_ends_as_a_fresh_load(pages, site, llm):
    llm.configure(latency=0.05, token_rate=20, reply_words=40)
    owner = pages.new("alice")
    sockets = []

    def route(ws):
        ws.connect_to_server()  # messages pass through both ways until the test cuts it
        sockets.append(ws)

    owner.route_web_socket("**/ws/**", route)
    url = create(
        owner,
        site,
        "duel",
        "Should trains be free?",
        {"a": "Ada Sterling (debater)", "b": "Marcus Vale (debater)", "judge": "Judge Ines Okafor (judge)"},
        {"turns": 2},
        visibility="public",
    )
    owner.evaluate(RECORD_STREAMS)
    owner.wait_for_function(
        "() => [...document.querySelectorAll('.card.writing .stream')].some(s => s.textContent.length > 30)"
    )
    target, text = owner.eval_on_selector(".card.writing .stream", "s => [s.id, s.textContent]")
    card = "#" + target.removesuffix("-text")
    sockets[-1].close(code=1011, reason="cut by the test")  # as a dropped connection: the page reconnects itself
    for _ in range(100):
        if len(sockets) == 2:
            break
        owner.wait_for_timeout(100)
    assert len(sockets) == 2
    # The turn goes on being written where it stood: what was shown before the cut, once, then more.
    owner.wait_for_function(
        "([card, length]) => { const c = document.querySelector(card);"
        " return !c.classList.contains('writing') || c.querySelector('.stream').textContent.length > length + 10; }",
        arg=[card, len(text)],
    )
    now = owner.eval_on_selector(card, "c => c.querySelector('.stream')?.textContent")
    if now is not None:
        assert now.startswith(text)
        screenshot(owner, "reconnect-mid-turn")

    owner.wait_for_selector("#status.status-completed", timeout=60_000)
    assert owner.evaluate("() => window.notReloaded") is True
    # The text streamed into the card that was cut mid-way is the saved turn word for word: nothing lost, none
    # twice.
    streamed = owner.evaluate("() => window.streamed")[target.split("-")[1]]
    assert words(streamed) == words(owner.eval_on_selector(f"{card} .md", "c => c.textContent"))
    fresh = pages.new("alice")
    fresh.goto(url)
    fresh.wait_for_selector("#status.status-completed")
    shown = owner.eval_on_selector_all("#transcript > article", ARTICLES)
    assert shown == fresh.eval_on_selector_all("#transcript > article", ARTICLES)
    assert owner.inner_html("#status") == fresh.inner_html("#status")
