"""The account pages for personal API tokens (make one, its secret shown once; see when each was last used; revoke
one) and for webhooks (register an address, its secret shown once; see each delivery's log; redeliver one;
remove one)."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from api import tokens, webhooks
from api.models import ApiToken, Delivery, Webhook


def _render(request: HttpRequest, status: int = 200, **context: object) -> HttpResponse:
    listed = ApiToken.objects.filter(user=request.user)
    return render(request, "api/tokens.html", {"tokens": listed, "read_only": True, **context}, status=status)


def _show_once(
    request: HttpRequest,
    page: Callable[..., HttpResponse],
    create: Callable[[], dict[str, object]],
    refusal: type[Exception],
    **typed: object,
) -> HttpResponse:
    """A form that makes something with a secret (a token, a webhook): `create` returns what the page shows of it,
    or raises `refusal` with the message to show."""
    try:
        made = create()
    except refusal as error:
        # What the person typed stays in the form with the message.
        return page(request, 400, error=str(error), **typed)
    # Shown once, in this response only: the page a reload brings has no secret in it.
    return page(request, **made)


@login_required
def tokens_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _render(request)
    name = request.POST.get("name", "")
    read_only = request.POST.get("access", "read") != "write"

    def create() -> dict[str, object]:
        token, raw = tokens.create_token(request.user, name, read_only=read_only)
        return {"new_token": token, "secret": raw}

    return _show_once(request, _render, create, ValueError, name=name, read_only=read_only)


@login_required
@require_POST
def revoke_token(request: HttpRequest, pk: int) -> HttpResponse:
    # Another person's token is the same 404 as none at all.
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    tokens.revoke(token)
    messages.success(request, f"Token “{token.name}” revoked: it is refused from now on.")
    return redirect("api_tokens")


# The deliveries each webhook's log shows, newest first.
DELIVERIES_SHOWN = 20
URL_MAX = 500


def _webhooks_page(request: HttpRequest, status: int = 200, **context: object) -> HttpResponse:
    listed = []
    for webhook in Webhook.objects.filter(owner=request.user):
        listed.append((webhook, list(webhook.deliveries.all()[:DELIVERIES_SHOWN])))
    defaults = {
        "webhooks": listed,
        "kinds": webhooks.event_kinds(),
        "chosen": [str(Webhook.Kind.DEBATE_FINISHED)],
        "allowed_networks": [str(network) for network in webhooks.allowed_networks()],
    }
    context = defaults | context
    return render(request, "api/webhooks.html", context, status=status)


@login_required
def webhooks_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _webhooks_page(request)
    url = request.POST.get("url", "").strip()
    known = {value for value, _ in webhooks.event_kinds()}
    chosen = [kind for kind in request.POST.getlist("events") if kind in known]

    def create() -> dict[str, object]:
        if not url or len(url) > URL_MAX:
            raise webhooks.Refused(f"Give the address to tell: an https:// URL of at most {URL_MAX} characters.")
        if not chosen:
            raise webhooks.Refused("Choose at least one event to be told of.")
        # The receiver keeps the secret to check each delivery's signature.
        secret = secrets.token_urlsafe(24)
        return {"new_webhook": webhooks.register(request.user, url, secret, chosen), "secret": secret}

    return _show_once(request, _webhooks_page, create, webhooks.Refused, url=url, chosen=chosen)


@login_required
@require_POST
def delete_webhook(request: HttpRequest, pk: int) -> HttpResponse:
    # Another person's webhook is the same 404 as none at all.
    webhook = get_object_or_404(Webhook, pk=pk, owner=request.user)
    webhook.delete()
    messages.success(request, f"Webhook for {webhook.url} removed: nothing more is sent there.")
    return redirect("api_webhooks")


@login_required
@require_POST
def redeliver(request: HttpRequest, pk: int) -> HttpResponse:
    delivery = get_object_or_404(Delivery, pk=pk, webhook__owner=request.user)
    webhooks.redeliver(delivery)
    messages.success(request, f"Delivery {delivery.pk} ({delivery.kind}) is being sent again.")
    return redirect("api_webhooks")
