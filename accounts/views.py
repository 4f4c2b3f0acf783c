"""A person's own account pages: log in and sign up, this month's spend, personal API tokens (make one, its
secret shown once; see when each was last used; revoke one) and webhooks (register an address, its secret shown
once; see each delivery's log; redeliver one; remove one). Thin views: the rules are in chaoslm/spending.py,
api/tokens.py and api/webhooks.py."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from api import tokens, webhooks
from api.models import ApiToken, Delivery, Webhook
from chaoslm import spending

# -- log in, sign up ---------------------------------------------------------------------------------


class LoginView(auth_views.LoginView):
    """Django's, except that a `next` leading back to the login form itself goes home instead.

    Logging in from the login page (its top bar's "Log in", an old bookmark) would otherwise land on the
    form again, which reads as if the login failed.
    """

    def get_redirect_url(self) -> str:
        url = super().get_redirect_url()
        return "" if url and urlsplit(url).path == reverse("login") else url

    def get_context_data(self, **kwargs: object) -> dict:
        return {**super().get_context_data(**kwargs), "signup_open": settings.CHAOSLM_SIGNUP}


def signup(request: HttpRequest) -> HttpResponse:
    if not settings.CHAOSLM_SIGNUP:
        # Not the 404 page, whose words are about private things: this address is known, and closed.
        return render(request, "registration/signup_closed.html", status=404)
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        # Two backends are configured (axes' and Django's), so login() must be told which one vouched for the user.
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


# -- this month's spend --------------------------------------------------------------------------------


@login_required
def usage(request: HttpRequest) -> HttpResponse:
    return render(request, "accounts/usage.html", spending.month(request.user))


# -- API tokens and webhooks ---------------------------------------------------------------------------


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


def _tokens_page(request: HttpRequest, status: int = 200, **context: object) -> HttpResponse:
    listed = ApiToken.objects.filter(user=request.user)
    return render(request, "accounts/tokens.html", {"tokens": listed, "read_only": True, **context}, status=status)


@login_required
def tokens_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _tokens_page(request)
    name = request.POST.get("name", "")
    read_only = request.POST.get("access", "read") != "write"

    def create() -> dict[str, object]:
        token, raw = tokens.create_token(request.user, name, read_only=read_only)
        return {"new_token": token, "secret": raw}

    return _show_once(request, _tokens_page, create, ValueError, name=name, read_only=read_only)


@login_required
@require_POST
def revoke_token(request: HttpRequest, pk: int) -> HttpResponse:
    # Another person's token is the same 404 as none at all.
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    tokens.revoke(token)
    messages.success(request, f"Token “{token.name}” revoked: it is refused from now on.")
    return redirect("api_tokens")


def _webhooks_page(request: HttpRequest, status: int = 200, **context: object) -> HttpResponse:
    defaults = {
        "webhooks": webhooks.with_deliveries(request.user),
        "kinds": webhooks.event_kinds(),
        "chosen": [str(Webhook.Kind.DEBATE_FINISHED)],
        "allowed_networks": [str(network) for network in webhooks.allowed_networks()],
    }
    context = defaults | context
    return render(request, "accounts/webhooks.html", context, status=status)


@login_required
def webhooks_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _webhooks_page(request)
    url = request.POST.get("url", "").strip()
    chosen = webhooks.known_events(request.POST.getlist("events"))

    def create() -> dict[str, object]:
        webhook, secret = webhooks.register_with_secret(request.user, url, chosen)
        return {"new_webhook": webhook, "secret": secret}

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
