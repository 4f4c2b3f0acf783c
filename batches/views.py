"""The views every batch of debates (a tournament, an experiment) has alike, made for its kind: the list, the form
and its running estimate, the page at its own address and at its share link, the owner's pause, resume and cancel,
delete, sharing, and the exports. `urlpatterns(kind, ...)` makes them all at their addresses; the kind's own
views.py says only what is its own (its page's context, its export files), with the same access rules as every page
(chaoslm/sharing.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import models
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_POST

from batches.arena import not_blind
from batches.checks import BatchError, OverBudget
from batches.forms import BatchForm
from batches.kinds import BatchKind
from chaoslm import (
    costs,
    http,  # noqa: F401  (registers the <id:...> converter)
    sharing,
)
from chaoslm.sharing import Visibility

View = Callable[..., HttpResponse]


def list_view(model: type[models.Model], template: str) -> View:
    """The kind's list (`template` extends batches/list.html): the person's own (the newest 50), then the others'
    public ones, 20 a page."""
    meta = model._meta
    names = {
        "noun": meta.verbose_name,
        "nouns": meta.verbose_name_plural,
        "new_url": f"{meta.model_name}_new",
        "detail_url": f"{meta.model_name}_detail",
    }

    def view(request: HttpRequest) -> HttpResponse:
        visible = Q(visibility=Visibility.PUBLIC)
        mine = model.objects.none()
        if request.user.is_authenticated:
            mine = model.objects.filter(owner=request.user)
            visible &= ~Q(owner=request.user)
        page = Paginator(model.objects.filter(visible), 20).get_page(request.GET.get("page"))
        return render(request, template, {**names, "mine": mine[:50], "public_page": page})

    return view


def page_views(
    model: type[models.Model], draw: Callable[[HttpRequest, Any, dict[str, Any]], HttpResponse]
) -> tuple[View, View]:
    """The batch's page at its own address and at its share link: `draw(request, batch, common)` renders it, with
    `common` what every kind's page has (who may do what, its sharing panel, its socket and exports addresses)."""
    name = model._meta.model_name

    def common(request: HttpRequest, batch: Any, ws_url: str, exports_base: str) -> dict[str, Any]:
        return {
            "is_owner": sharing.is_owner(request.user, batch),
            "can_delete": sharing.can_delete(request.user, batch),
            # Staff manage any batch's sharing: one made on the command line may belong to nobody who could.
            "share": sharing.share_panel(request, batch, staff=True),
            "not_blind": not_blind(batch),
            "ws_url": ws_url,
            "exports_base": exports_base,
        }

    def by_id(request: HttpRequest, pk: int) -> HttpResponse:
        batch = sharing.visible_or_404(model, request.user, pk=pk)
        here = reverse(f"{name}_detail", args=[pk])
        return draw(request, batch, common(request, batch, f"/ws/{name}s/{pk}/", here))

    def by_share_link(request: HttpRequest, token: str) -> HttpResponse:
        batch = sharing.visible_or_404(model, request.user, token=token)
        here = reverse(f"{name}_share", args=[token])
        return draw(request, batch, common(request, batch, f"/ws/{name}-share/{token}/", here))

    return by_id, by_share_link


def owner_action_view(model: type[models.Model], act: Callable[[Any], None]) -> View:
    """The owner's POST that does `act(batch)` (pause, resume, cancel), then back to its page."""
    name = model._meta.model_name

    @sharing.owner_action(model)
    def view(request: HttpRequest, batch: Any) -> HttpResponse:
        try:
            act(batch)
        except OverBudget as error:
            messages.error(request, str(error))
        return redirect(f"{name}_detail", batch.pk)

    return view


def delete_view(model: type[models.Model], delete: Callable[[Any], None], done: str) -> View:
    """The owner's (or staff's) POST that deletes the batch with `delete` (which stops its run first), then to
    the kind's list with the message `done`. Who may not see it gets a 404, who may see it but not delete it 403."""
    noun, name = model._meta.verbose_name, model._meta.model_name

    @login_required
    @require_POST
    def view(request: HttpRequest, pk: int) -> HttpResponse:
        batch = sharing.visible_or_404(model, request.user, pk=pk)
        if not sharing.can_delete(request.user, batch):
            return HttpResponseForbidden(f"Only the {noun}'s owner can delete it.")
        delete(batch)
        messages.success(request, done)
        return redirect(f"{name}_list")

    return view


def export_views(model: type[models.Model], files: Mapping[str, Callable[[Any], str]]) -> tuple[View, View]:
    """The exports at the batch's own address and at its share link: `files` maps a file's name (`report.json`,
    `matches.csv`, ...) to the text of that file for a batch; a name it lacks is a 404."""
    prefix = model._meta.model_name

    def respond(batch: Any, file: str) -> HttpResponse:
        text = files.get(file)
        if text is None:
            return HttpResponse("No such export.", status=404)
        content_type = "application/json" if file.endswith(".json") else "text/csv; charset=utf-8"
        response = HttpResponse(text(batch), content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{prefix}-{batch.pk}-{file}"'
        return response

    def by_id(request: HttpRequest, pk: int, name: str) -> HttpResponse:
        return respond(sharing.visible_or_404(model, request.user, pk=pk), name)

    def by_share_link(request: HttpRequest, token: str, name: str) -> HttpResponse:
        return respond(sharing.visible_or_404(model, request.user, token=token), name)

    return by_id, by_share_link


def new_view(kind: BatchKind, form_class: type[BatchForm]) -> View:
    """The new-batch form (`<app>/new.html`, extending batches/new.html): a valid one that its kind accepts is
    created, started and shown; a refusal is shown on the form, with what was typed."""
    model = kind.model
    app, name = model._meta.app_label, model._meta.model_name

    @login_required
    def view(request: HttpRequest) -> HttpResponse:
        form = form_class(request.POST or None, request.FILES or None, user=request.user)
        if request.method == "POST" and form.is_valid():
            try:
                batch = form.create(request.user)
            except BatchError as error:
                form.add_error(None, [problem.message for problem in error.problems])
            else:
                kind.start(batch)
                return redirect(f"{name}_detail", batch.pk)
        context = {
            "form": form,
            "noun": model._meta.verbose_name,
            "estimate_url": reverse(f"{name}_estimate"),
            "estimate_template": f"{app}/estimate.html",
            "allowance": costs.allowance(request.user),
        }
        return render(request, f"{app}/new.html", context)

    return view


def estimate_view(kind: BatchKind, form_class: type[BatchForm]) -> View:
    """The form's running estimate (htmx): how many debates and calls, or what is still wrong."""
    template = f"{kind.model._meta.app_label}/estimate.html"

    @login_required
    @require_POST
    def view(request: HttpRequest) -> HttpResponse:
        form = form_class(request.POST, request.FILES or None, user=request.user)
        form.is_valid()
        # What is wrong with an uploaded question set shows at once, before the form is sent.
        file_errors = form.errors.get("questions_file") if request.FILES else None
        context = {
            "form": form,
            "estimate": form.estimate(),
            "cost": form.cost_estimate(),
            "time": form.time_estimate(),
            "allowance": costs.allowance(request.user),
            "file_errors": file_errors,
        }
        return render(request, template, context)

    return view


def urlpatterns(
    kind: BatchKind,
    *,
    share: str,
    form: type[BatchForm],
    page: Callable[[HttpRequest, Any, dict[str, Any]], HttpResponse],
    exports: Mapping[str, Callable[[Any], str]],
    deleted: str,
) -> list[URLPattern]:
    """Every address of a kind's pages, under `<app>/` and its share links under `<share>/`, named `<model>_...`:
    `page` draws its page (see `page_views`), `exports` its files (see `export_views`), `deleted` is the message
    after it is deleted."""
    model = kind.model
    app, name = model._meta.app_label, model._meta.model_name
    detail, shared = page_views(model, page)
    export, shared_export = export_views(model, exports)
    actions = [
        path(f"{app}/<id:pk>/{action}/", owner_action_view(model, getattr(kind, action)), name=f"{name}_{action}")
        for action in ("pause", "resume", "cancel")
    ]
    return [
        path(f"{app}/", list_view(model, f"{app}/list.html"), name=f"{name}_list"),
        path(f"{app}/new/", new_view(kind, form), name=f"{name}_new"),
        path(f"{app}/estimate/", estimate_view(kind, form), name=f"{name}_estimate"),
        path(f"{app}/<id:pk>/", detail, name=f"{name}_detail"),
        path(f"{app}/<id:pk>/export/<str:name>", export, name=f"{name}_export"),
        *actions,
        path(f"{app}/<id:pk>/delete/", delete_view(model, kind.delete, deleted), name=f"{name}_delete"),
        # Staff manage any batch's sharing: one made on the command line may belong to nobody who could.
        path(
            f"{app}/<id:pk>/visibility/",
            sharing.visibility_view(model, kind.set_visibility, staff=True),
            name=f"{name}_visibility",
        ),
        path(f"{app}/<id:pk>/share/reset/", sharing.share_reset_view(model, staff=True), name=f"{name}_share_reset"),
        path(f"{share}/<str:token>/", shared, name=f"{name}_share"),
        path(f"{share}/<str:token>/export/<str:name>", shared_export, name=f"{name}_share_export"),
    ]
