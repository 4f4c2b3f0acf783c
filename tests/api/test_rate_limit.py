"""The per-token rate limit (CHAOSLM_API_CALLS_PER_MINUTE), through Django's test client: past the limit a
token gets 429 with Retry-After; another token is not affected."""

from __future__ import annotations

import pytest

from api.models import ApiToken
from api.tokens import create_token

pytestmark = pytest.mark.django_db


def test_past_the_limit_a_token_gets_429_with_retry_after(client, people, settings):
    settings.CHAOSLM_API_CALLS_PER_MINUTE = 3
    _, busy = create_token(people["owner"], "busy", read_only=True)
    _, calm = create_token(people["other"], "calm", read_only=True)
    for _ in range(3):
        assert client.get("/api/v1/personas", HTTP_AUTHORIZATION=f"Bearer {busy}").status_code == 200
    refused = client.get("/api/v1/personas", HTTP_AUTHORIZATION=f"Bearer {busy}")
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert f"try again in {refused['Retry-After']} seconds" in refused.json()["detail"]
    assert client.get("/api/v1/personas", HTTP_AUTHORIZATION=f"Bearer {calm}").status_code == 200


def test_the_admin_makes_a_token_shown_once_and_revokes_it(admin_client, people):
    reply = admin_client.post(
        "/admin/api/apitoken/add/", {"user": people["other"].pk, "name": "from admin", "read_only": "on"}, follow=True
    )
    shown = next(str(m) for m in reply.context["messages"] if "shown only now" in str(m))
    secret = shown.rsplit(" ", 1)[1]
    assert admin_client.get("/api/v1/personas", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 200

    token = ApiToken.objects.get(name="from admin")
    assert token.user == people["other"] and token.read_only and secret not in token.digest
    admin_client.post(
        "/admin/api/apitoken/", {"action": "revoke_selected", "_selected_action": [token.pk]}, follow=True
    )
    assert admin_client.get("/api/v1/personas", HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 401
