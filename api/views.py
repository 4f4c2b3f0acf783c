"""The account page for personal API tokens: make one (its secret shown once), see when each was last used,
revoke one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from api import tokens
from api.models import ApiToken


def _render(request: HttpRequest, status: int = 200, **context: object) -> HttpResponse:
    listed = ApiToken.objects.filter(user=request.user)
    return render(request, "api/tokens.html", {"tokens": listed, "read_only": True, **context}, status=status)


@login_required
def tokens_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _render(request)
    name = request.POST.get("name", "")
    read_only = request.POST.get("access", "read") != "write"
    try:
        token, raw = tokens.create_token(request.user, name, read_only=read_only)
    except ValueError as error:
        # What the person typed stays in the form with the message.
        return _render(request, 400, error=str(error), name=name, read_only=read_only)
    # Shown once, in this response only: the page a reload brings has no secret in it.
    return _render(request, new_token=token, secret=raw)


@login_required
@require_POST
def revoke_token(request: HttpRequest, pk: int) -> HttpResponse:
    # Another person's token is the same 404 as none at all.
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    tokens.revoke(token)
    messages.success(request, f"Token “{token.name}” revoked: it is refused from now on.")
    return redirect("api_tokens")
