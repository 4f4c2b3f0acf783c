"""Chat rooms in a real browser."""

from pathlib import Path

import pytest

from tests.browser.conftest import manage, screenshot

pytestmark = pytest.mark.browser


def open_room(page, base, title, names):
    page.goto(base + "/rooms/")
    page.fill("#id_title", title)
    for name in names:
        page.check(f"label:has-text('{name}') input")
    page.click("button.primary")
    page.wait_for_url("**/rooms/*/")


def say(page, text):
    page.fill("form.say textarea", text)
    page.click("form.say button")


def test_a_manual_round_with_answers_kept_and_dropped_then_one_toggled_off(pages, site, llm):
    llm.configure(latency=0.2, token_rate=60, reply_words=8)
    page = pages.new("alice")
    open_room(page, site, "Manual", ["Ada Sterling", "Marcus Vale", "Mira"])
    say(page, "What should cities do about cars?")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 3")
    screenshot(page, "room-pending")
    dropped = page.locator("#pending .msg-pending").nth(1)
    dropped_text = dropped.locator(".md").inner_text()
    dropped.locator("input[name=keep]").uncheck()
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 0")
    assert page.locator("#messages .msg-agent").count() == 3
    assert page.locator("#messages .msg-agent.inactive").count() == 1
    assert dropped_text in page.locator("#messages .msg-agent.inactive").inner_text()
    # Toggle Mira's kept answer off: the next requests leave it out.
    kept = page.locator("#messages .msg-agent:not(.inactive)").last
    kept_text = kept.locator(".md").inner_text()
    kept.locator(".active-toggle input").uncheck()
    page.wait_for_function("() => document.querySelectorAll('#messages .msg-agent.inactive').length === 2")
    llm.reset()
    llm.configure(reply_words=5)
    say(page, "And bicycles?")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 3")
    texts = [str(r.messages) for r in llm.requests]
    assert len(texts) == 3
    assert all(kept_text not in t and dropped_text not in t and "And bicycles?" in t for t in texts)


def test_an_agent_removed_while_it_writes_leaves_and_the_others_answers_stay(pages, site, llm):
    llm.configure(latency=0.2, token_rate=4, reply_words=12)
    page = pages.new("alice")
    open_room(page, site, "Leaving", ["Ada Sterling", "Marcus Vale", "Mira"])
    say(page, "Who should leave?")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-thinking').length === 3")
    page.click("button[aria-label='Remove Marcus Vale']")
    page.wait_for_function(
        "() => document.querySelectorAll('#pending .msg-pending').length === 2"
        " && !document.querySelector('#pending .msg-thinking')",
        timeout=20_000,
    )
    assert "[Marcus Vale | debater] left the conversation" in page.inner_text("#messages")
    assert "Marcus Vale" not in page.inner_text("#pending")
    assert page.locator("button[aria-label='Remove Marcus Vale']").count() == 0
    screenshot(page, "room-agent-left")


def test_auto_mode_with_a_mention_a_skip_the_countdown_ctrl_m_and_a_stop_mid_generation(pages, site, llm):
    llm.configure(
        latency=0.1,
        token_rate=50,
        reply_words=6,
        rules=[{"match": "olive|alice: Kick off", "reply": "SKIP", "times": 1}],
    )
    page = pages.new("alice")
    open_room(page, site, "Auto", ["Ada Sterling", "Marcus Vale", "Mira"])
    say(page, "Kick off, @Mira goes first")
    page.wait_for_function(
        "() => document.querySelectorAll('#pending .msg-pending').length === 2"
        " && !document.querySelector('#pending .msg-thinking')"
    )
    assert "skipped their turn" in page.inner_text("#messages")
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 0")
    page.keyboard.press("Control+m")
    page.wait_for_selector("#room-status.mode-auto")
    page.wait_for_selector("#room-status [data-countdown]", timeout=20_000)  # "Next response in Ns"
    assert "Next response in" in page.inner_text("#room-status")
    assert (
        page.locator("form.say textarea").is_disabled()
        or page.evaluate("getComputedStyle(document.querySelector('form.say')).pointerEvents") == "none"
    )
    screenshot(page, "room-auto")
    # Slow the model down, then stop while an answer is being written: nothing of it is kept.
    llm.configure(latency=3.0, rules=[])
    page.wait_for_selector("#pending .msg-thinking", timeout=20_000)
    before = page.locator("#messages .msg-agent").count()
    page.keyboard.press("Control+m")
    page.wait_for_selector("#room-status.mode-manual")
    page.wait_for_timeout(3500)
    assert page.locator("#messages .msg-agent").count() == before
    assert page.locator("#pending .msg-thinking").count() == 0
    lines = page.locator("#messages .msg-system").all_inner_texts()
    assert "Auto mode started" in lines and "Auto mode stopped" in lines
    authors = page.locator("#messages .msg-agent .who").all_inner_texts()
    assert authors[2] == "Mira"  # the mention went first in auto mode


def test_a_skip_is_shown_and_a_rate_limit_shows_a_countdown(pages, site, llm):
    llm.configure(latency=0.05, rules=[{"reply": "SKIP", "times": 1}, {"fault": "429", "retry_after": 30}])
    page = pages.new("alice")
    open_room(page, site, "Limits", ["Ada Sterling", "Marcus Vale"])
    page.click("#auto-toggle")
    page.wait_for_selector("#messages .msg-error", timeout=20_000)
    assert "skipped their turn" in page.inner_text("#messages")
    error = page.inner_text("#messages .msg-error")
    assert "Failed to respond" in error and "Rate limited. Retry in" in error
    start = int(page.inner_text("#messages .msg-error [data-countdown]"))
    page.wait_for_timeout(2200)
    assert int(page.inner_text("#messages .msg-error [data-countdown]")) <= start - 2
    assert "Auto mode paused: Rate limited. Retry in 30s" in page.inner_text("#room-status")
    screenshot(page, "room-rate-limited")


def test_agents_answer_in_the_order_ticked_and_the_keep_button_shows_only_when_there_is_something_to_add(
    pages, site, llm
):
    llm.configure(latency=1.5, reply_words=5)
    page = pages.new("alice")
    page.goto(site + "/rooms/")
    page.fill("#id_title", "Ticked")
    for name in ("Mira", "Marcus Vale", "Ada Sterling"):
        page.check(f"label:has-text('{name}') input")
    page.uncheck("label:has-text('Marcus Vale') input")
    page.check("label:has-text('Marcus Vale') input")
    assert page.get_attribute("label:has-text('Mira')", "data-place") == "1"
    assert page.get_attribute("label:has-text('Marcus Vale')", "data-place") == "3"
    screenshot(page, "room-new-ticked-order")
    page.click("button.primary")
    page.wait_for_url("**/rooms/*/")
    labels = page.locator("#room-status .agent-label button:not(.remove)").all_inner_texts()
    assert [label.split(" | ")[0] for label in labels] == ["Mira", "Ada Sterling", "Marcus Vale"]

    keep = page.locator("#keep-form button")
    say(page, "Hello there")
    page.wait_for_selector("#pending .msg-thinking")
    assert not keep.is_visible()  # agents still thinking: nothing to add yet
    page.wait_for_function(
        "() => document.querySelectorAll('#pending .msg-pending').length === 3"
        " && !document.querySelector('#pending .msg-thinking')"
    )
    assert keep.is_visible()
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 0")
    assert not keep.is_visible()
    page.click("#auto-toggle")
    page.wait_for_selector("#pending .msg-thinking", timeout=20_000)
    assert not keep.is_visible()  # auto mode: answers join the chat themselves
    page.click("#auto-toggle")
    page.wait_for_selector("#room-status.mode-manual")

    # The side panel's select and number inputs look like the other inputs (not the browser's bare ones).
    for selector in (".side-panel select[name=persona]", ".side-panel input[type=number]"):
        style = page.eval_on_selector(
            selector,
            "e => { const s = getComputedStyle(e); return [s.borderRadius, s.borderTopColor, s.paddingLeft]; }",
        )
        assert style == ["6.4px", "rgb(228, 231, 236)", "8px"], selector
    screenshot(page, "room-side-panel")


def test_pick_mode_the_owner_says_who_speaks_next_and_reorders_the_queue(pages, site, llm):
    llm.configure(latency=0.05, reply_words=5)
    page = pages.new("alice")
    open_room(page, site, "Pick", ["Ada Sterling", "Marcus Vale", "Mira"])
    page.select_option(".turn-order select[name=turn_order]", "pick")
    page.click(".turn-order button[type=submit]")
    page.wait_for_selector("#room-status .up-next")
    assert page.locator("#room-status .up-next li").all_inner_texts()[0].startswith("Ada Sterling")
    page.click("button[aria-label='Mira speaks next']")
    page.wait_for_function("() => document.querySelector('#room-status .up-next li').textContent.startsWith('Mira')")
    page.click("button[aria-label='Move Marcus Vale earlier']")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('#room-status .up-next li'),"
        " li => li.textContent.trim().split(' ')[0]).join(',') === 'Mira,Marcus,Ada'"
    )
    screenshot(page, "room-pick")
    # Slow answers, so the order can be changed while auto mode runs.
    llm.configure(latency=1.0, reply_words=5)
    say(page, "Who goes first?")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 3")
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 0")
    page.click("#auto-toggle")
    page.wait_for_function("() => document.querySelectorAll('#messages .msg-agent').length >= 4", timeout=20_000)
    page.click("button[aria-label='Ada Sterling speaks next']")
    page.wait_for_function("() => document.querySelectorAll('#messages .msg-agent').length >= 6", timeout=30_000)
    page.click("#auto-toggle")
    page.wait_for_selector("#room-status.mode-manual")
    screenshot(page, "room-pick-auto")
    authors = page.locator("#messages .msg-agent .who").all_inner_texts()[3:6]
    # Mira, then Ada (put next while Mira's answer was shown), then Marcus: the owner's order, not the rotation's.
    assert authors == ["Mira", "Ada Sterling", "Marcus Vale"]


def test_a_whisper_a_summary_card_and_taking_the_floor(pages, site, site_env, llm):
    llm.configure(latency=0.05, reply_words=12, rules=[{"match": "Write the summary", "reply": "They spoke of cars."}])
    page = pages.new("alice")
    open_room(page, site, "Whispers", ["Ada Sterling", "Marcus Vale", "Mira"])
    room_id = int(page.url.rstrip("/").split("/")[-1])
    # A whisper to Mira: only she answers, and its card says who saw it.
    page.click(".whisper-to summary")
    page.check(".whisper-to label:has-text('Mira') input")
    say(page, "Mira only: the code word is HERON")
    page.wait_for_selector("#messages .msg-user.whisper")
    assert "seen by Mira only" in page.inner_text("#messages .msg-user.whisper")
    page.wait_for_function(
        "() => document.querySelectorAll('#pending .msg-pending').length === 1"
        " && !document.querySelector('#pending .msg-thinking')"
    )
    assert page.inner_text("#pending .msg-pending .who") == "Mira"
    page.click("#keep-form button")
    # Kept before the next message: one sent while answers still wait is refused (its text kept), as a person's is.
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 0")
    say(page, "What about cars in cities?")
    page.wait_for_function(
        "() => document.querySelectorAll('#pending .msg-pending').length === 3"
        " && !document.querySelector('#pending .msg-thinking')"
    )
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 0")
    screenshot(page, "room-whisper")
    # A context window the room has filled to 85 %: auto mode folds the oldest messages into a summary.
    manage(
        site_env,
        "shell",
        "-c",
        "from personas.models import Provider; from rooms.table import load_room;"
        " from rooms.models import Room;"
        f" room = Room.objects.get(pk={room_id}); tokens = load_room(room.pk).meter().state()[1];"
        f" small = Provider.objects.create(name='Small {room_id}', base_url='{llm.url}', default_model='m',"
        " context_window=int(tokens / 0.85));"
        " [a.save() for a in room.agents.all() if not a.llm.update(provider_id=small.pk)]",
    )
    llm.configure(token_rate=6, reply_words=80)
    page.click("#auto-toggle")
    page.wait_for_selector("#messages .msg-summary", timeout=20_000)
    summary = page.locator("#messages .msg-summary")
    assert "of 2 earlier messages" in summary.inner_text()
    summary.locator("details summary").click()
    assert "They spoke of cars." in summary.locator("details").inner_text()
    assert page.locator("#messages .msg.folded").count() == 2  # the originals stay on the page
    # Take the floor while an answer is being written: it is kept, faded, marked "interrupted"; the input opens.
    page.wait_for_function(
        "() => (document.querySelector('#pending .msg-thinking .stream')?.textContent || '').split(' ').length > 3",
        timeout=30_000,
    )
    page.click("#interrupt")
    page.wait_for_selector("#room-status.mode-manual")
    page.wait_for_selector("#messages .msg-agent.inactive .interrupted-note", timeout=10_000)
    assert page.locator("#pending .msg-thinking").count() == 0
    # The note and the system message come in separate pushes (the loop's and the view's), in either order.
    page.wait_for_function(
        "() => document.querySelector('#messages').innerText.includes('Auto mode stopped: the owner took the floor')",
        timeout=10_000,
    )
    assert page.locator("form.say textarea").is_enabled()
    screenshot(page, "room-summary-interrupted")


SHOTS = Path("/tmp/shots-rooms")
# Whatever the keyboard reaches, described: an owner's control is any element that posts (hx-post) or sits in the
# agents' bar or is marked owner-only.
FOCUSED = """() => { const e = document.activeElement; if (!e || e === document.body) return null;
  return {tag: e.tagName, text: (e.innerText || e.value || '').trim().slice(0, 40), id: e.id,
          owner: !!(e.closest('[hx-post], .owner-only, .agent-bar, .up-next') || e.getAttribute('hx-post'))}; }"""


def tab_stops(page, limit=80):
    """Every element Tab reaches on the page, once round."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUSED)
        if stop is None or stop in stops:
            break
        stops.append(stop)
    return stops


def room_with_faded_answer(page, site, title):
    """A room of two agents with one kept and one faded answer, made unlisted; its share link."""
    open_room(page, site, title, ["Ada Sterling", "Marcus Vale"])
    say(page, "What should cities do about cars?")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 2")
    page.locator("#pending .msg-pending input[name=keep]").first.uncheck()
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#messages .msg-agent.inactive').length === 1")
    page.select_option("select[name=visibility]", "unlisted")
    page.click("form:has(select[name=visibility]) button")
    page.wait_for_selector(".share-link")
    return page.input_value(".share-link")


def test_a_stranger_on_the_share_page_sees_the_owner_s_name_and_tab_reaches_no_owner_control(pages, site, llm):
    llm.configure(latency=0.05, reply_words=8)
    owner = pages.new("alice")
    share = room_with_faded_answer(owner, site, "Shared room")
    stranger = pages.new()
    stranger.goto(share)
    stranger.wait_for_selector("#room-status")
    assert "alice" in stranger.inner_text("#messages .msg-user .who")
    assert "(you)" not in stranger.inner_text("#room")
    stops = tab_stops(stranger)
    assert stops and not [stop for stop in stops if stop["owner"]], stops
    # The owner pauses an agent: the status line pushed to every viewer still gives the stranger no control.
    owner.click("#room-status .agent-label button:has-text('Marcus Vale')")
    stranger.wait_for_selector("#room-status .agent-label.paused")
    assert "(paused)" in stranger.inner_text("#room-status")
    stops = tab_stops(stranger)
    assert stops and not [stop for stop in stops if stop["owner"]], stops
    assert not [label for label in owner.locator(".viewer-only").all() if label.is_visible()]  # controls instead
    SHOTS.mkdir(exist_ok=True)
    for width in (390, 1280):
        stranger.set_viewport_size({"width": width, "height": 900})
        stranger.screenshot(path=str(SHOTS / f"room-share-stranger-{width}.png"), full_page=True)
        owner.set_viewport_size({"width": width, "height": 900})
        owner.screenshot(path=str(SHOTS / f"room-faded-{width}.png"), full_page=True)


def test_the_auto_button_says_the_mode_the_floor_focuses_the_input_and_ctrl_enter_sends(pages, site, llm):
    llm.configure(latency=0.3, token_rate=5, reply_words=30)
    page = pages.new("alice")
    open_room(page, site, "Keys", ["Ada Sterling", "Marcus Vale", "Mira"])
    toggle = page.locator("#auto-toggle")
    assert toggle.get_attribute("aria-pressed") == "false" and toggle.inner_text() == "Auto mode off"
    page.fill("form.say textarea", "Cars or bikes?")
    page.focus("form.say textarea")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#messages .msg-user")
    page.wait_for_function("() => document.querySelector('form.say textarea').value === ''")  # sent: cleared
    # A manual round: every agent writes at once, and the status line names them.
    page.wait_for_selector("#room-status .writing")
    assert " writing" in page.inner_text("#room-status .writing")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 3", timeout=30_000)
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 0")
    page.keyboard.press("Control+m")
    page.wait_for_function("() => document.querySelector('#auto-toggle').getAttribute('aria-pressed') === 'true'")
    assert toggle.inner_text() == "Auto mode on"
    # Auto mode: the one writing is named, and how many wait after it.
    page.wait_for_function(
        "() => /^· (Ada Sterling|Marcus Vale|Mira) is writing; 2 waiting$/"
        ".test(document.querySelector('#room-status .writing')?.textContent.trim() || '')",
        timeout=20_000,
    )
    page.click("#interrupt")
    page.wait_for_selector("#room-status.mode-manual")
    page.wait_for_function("() => document.activeElement === document.querySelector('form.say textarea')")
    assert toggle.get_attribute("aria-pressed") == "false" and toggle.inner_text() == "Auto mode off"


def test_each_side_panel_saves_in_place_keeping_the_focus_and_the_memory_choice_is_whole(pages, site, llm):
    page = pages.new("alice")
    open_room(page, site, "Panels", ["Ada Sterling", "Marcus Vale"])
    page.evaluate("window.sameDocument = true")
    SHOTS.mkdir(exist_ok=True)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        # Every memory choice shows whole: nothing of it is cut by the panel.
        cut = page.eval_on_selector_all(
            ".memory #id_memory label",
            "labels => labels.filter(l => l.scrollWidth > l.clientWidth + 1"
            " || l.getBoundingClientRect().right > l.closest('.panel').getBoundingClientRect().right)"
            ".map(l => l.textContent)",
        )
        assert cut == [], (width, cut)
        page.locator("#panel-memory").screenshot(path=str(SHOTS / f"room-memory-{width}.png"))
    page.check("#id_memory_1")
    before = page.evaluate("scrollY")
    page.click("#save-memory")
    page.wait_for_selector("#panel-memory .panel-note")
    assert page.inner_text("#panel-memory .panel-note") == "Memory: stop auto mode at 95 % (no summary)."
    assert page.evaluate("window.sameDocument") is True  # no reload
    assert page.evaluate("document.activeElement.id") == "save-memory"
    assert abs(page.evaluate("scrollY") - before) < 5
    assert page.is_checked("#id_memory_1")
    ada = page.locator("#panel-talkativeness input[type=number]").first
    ada.fill("30")
    ada.press("Enter")
    page.wait_for_selector("#panel-talkativeness .panel-note")
    assert page.evaluate("document.activeElement.name").startswith("talk-")
    page.wait_for_function("() => document.querySelector('#room-status').textContent.includes('· 30%')")
    page.select_option("#panel-turn-order select[name=turn_order]", "pick")
    page.click("#save-turn-order")
    page.wait_for_selector("#room-status .up-next")
    assert page.inner_text("#panel-turn-order .panel-note") == "Turn order: pick (you choose who is next)."
    page.fill("#template-name", "Two voices")
    page.click("#save-template")
    page.wait_for_selector("#panel-template .panel-note")
    page.fill("#id_response_delay", "4")
    page.click("#save-settings")
    page.wait_for_selector("#panel-settings .panel-note")
    assert page.evaluate("document.activeElement.id") == "save-settings"
    assert page.evaluate("window.sameDocument") is True
