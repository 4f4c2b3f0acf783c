"""A room under CHAOSLM_RUNNER=celery: its rounds and its auto mode run on a Celery worker, not in the web
process, and switching auto mode off from the page stops the worker's generation in flight."""

import pytest

from tests.browser.conftest import USERS, browser, screenshot  # noqa: F401 - the shared headless Chromium fixture
from tests.browser.test_rooms import open_room, say

pytestmark = [pytest.mark.scaleout, pytest.mark.browser]


def test_a_rooms_rounds_and_auto_mode_run_on_a_worker_and_stop_from_the_page(stack, _llm_server_process, browser):  # noqa: F811
    _llm_server_process.configure(latency=0.1, token_rate=50, reply_words=6)
    stack.manage(
        "shell",
        "-c",
        f"from django.contrib.auth.models import User; User.objects.create_user('alice', password={USERS['alice']!r})",
    )
    base = stack.start_web()
    stack.start_worker("w", threads=4)
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", USERS["alice"])
    page.click("button[type=submit]")
    page.wait_for_url(base + "/")
    open_room(page, base, "On a worker", ["Ada Sterling", "Marcus Vale"])

    say(page, "Start us off")
    page.wait_for_function("() => document.querySelectorAll('#pending .msg-pending').length === 2")
    page.click("#keep-form button")
    page.wait_for_function("() => document.querySelectorAll('#messages .msg-agent').length === 2")

    page.click("#auto-toggle")
    page.wait_for_selector("#room-status.mode-auto")
    page.wait_for_function("() => document.querySelectorAll('#messages .msg-agent').length >= 3", timeout=30_000)
    # Slow the model, then stop while an answer is being written: the worker drops it.
    _llm_server_process.configure(latency=4.0)
    page.wait_for_selector("#pending .msg-thinking", timeout=30_000)
    before = page.locator("#messages .msg-agent").count()
    page.click("#auto-toggle")
    page.wait_for_selector("#room-status.mode-manual")
    page.wait_for_timeout(5000)
    screenshot(page, "room-on-a-worker")
    assert page.locator("#messages .msg-agent").count() == before
    assert page.locator("#pending .msg-thinking").count() == 0
    context.close()

    log = "".join(path.read_text() for path in stack.log_dir.glob("worker-*.log"))
    assert "rooms.tasks.room_round" in log and "rooms.tasks.room_auto" in log
    assert "Traceback" not in log
    held = stack.manage("shell", "-c", "from rooms.models import Room; print(Room.objects.get().held_until)").stdout
    assert held.strip().splitlines()[-1] == "None"  # the worker let the room go
