"""The webhooks page over HTTP against a running server: CSRF on every form, a refused address told with what
was typed kept (400), the secret shown once, and another person's webhook or delivery the same 404 as none."""

from __future__ import annotations

import re

from tests.api.conftest import csrf_of, logged_in
from tests.api.test_webhooks import loopback_only

__all__ = ["loopback_only"]  # the guard: no test here connects off this machine

REFUSED = (
    "10.0.0.1 is a private address: webhooks go to public addresses only, or to networks the site&#x27;s setting "
    "CHAOSLM_WEBHOOKS_ALLOW_NETWORKS names (add 10.0.0.1/32 to it to allow this one)."
)


def test_the_webhooks_page_registers_refuses_and_keeps_others_out(server):
    with logged_in(server, "otto") as otto, logged_in(server, "olive") as olive:
        page = otto.get("/account/webhooks/")
        assert page.status_code == 200
        # The server allows loopback (tests/api/conftest.py): the page says so, naming the setting.
        assert (
            "or one on the networks this\n      site allows besides (<code>CHAOSLM_WEBHOOKS_ALLOW_NETWORKS</code>: "
            "127.0.0.1/32)" in page.text
        )
        assert "addresses on private,\n      loopback or link-local networks are refused" not in page.text
        # No CSRF token: refused, nothing made.
        assert otto.post("/account/webhooks/", data={"url": "http://127.0.0.1:9/x"}).status_code == 403
        csrf = csrf_of(page.text)
        refused = otto.post(
            "/account/webhooks/",
            data={"url": "http://10.0.0.1/hook", "events": ["tournament.finished"], "csrfmiddlewaretoken": csrf},
        )
        assert refused.status_code == 400 and REFUSED in refused.text
        assert 'value="http://10.0.0.1/hook"' in refused.text
        assert re.search(r'value="tournament.finished" checked', refused.text)
        none_chosen = otto.post("/account/webhooks/", data={"url": "http://127.0.0.1:9/x", "csrfmiddlewaretoken": csrf})
        assert none_chosen.status_code == 400 and "Choose at least one event" in none_chosen.text
        made = otto.post(
            "/account/webhooks/",
            data={"url": "http://127.0.0.1:9/x", "events": ["experiment.finished"], "csrfmiddlewaretoken": csrf},
        )
        assert made.status_code == 200
        secret = re.search(r'class="share-link new-secret" readonly value="([^"]+)"', made.text).group(1)
        assert secret not in otto.get("/account/webhooks/").text  # shown once
        delete = re.search(r'action="(/account/webhooks/(\d+)/delete/)"', made.text)
        hook_id = int(delete.group(2))
        # Olive gets the same 404 for otto's webhook as for none, and cannot remove it.
        olive_csrf = csrf_of(olive.get("/account/webhooks/").text)
        assert olive.post(delete.group(1), data={"csrfmiddlewaretoken": olive_csrf}).status_code == 404
        redeliver = olive.post("/account/deliveries/999999/redeliver/", data={"csrfmiddlewaretoken": olive_csrf})
        assert redeliver.status_code == 404
        assert "127.0.0.1:9/x" not in olive.get("/account/webhooks/").text
        assert otto.post(delete.group(1), data={"csrfmiddlewaretoken": csrf}).status_code == 302
        assert f"/account/webhooks/{hook_id}/delete/" not in otto.get("/account/webhooks/").text
    with logged_in(server, "otto") as anonymous_check:
        anonymous_check.cookies.clear()
        assert anonymous_check.get("/account/webhooks/").status_code == 302  # to the login page
