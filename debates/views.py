"""Debate pages and actions. Plain function views: check access, call a plain module, render."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from chaoslm import live, runner, sharing
from chaoslm.personas.models import Persona, default_endpoint
from debates import transcripts
from debates.broadcast import card_push, live_parts_html
from debates.formats import FORMATS, FormatError, get_format
from debates.forms import NewDebateForm
from debates.models import Debate
from debates.selectors import page_state
from debates.services import end_debate, post_message
from debates.setup import SeatChoice, create_debate


def home(request: HttpRequest) -> HttpResponse:
    visible = Q(visibility=Debate.Visibility.PUBLIC)
    mine = Debate.objects.none()
    if request.user.is_authenticated:
        mine = Debate.objects.filter(owner=request.user)
        visible &= ~Q(owner=request.user)
    page = Paginator(Debate.objects.filter(visible).select_related("owner"), 20).get_page(request.GET.get("page"))
    endpoint = default_endpoint()
    return render(
        request,
        "home.html",
        {
            "mine": mine[:50],
            "public_page": page,
            "persona_count": Persona.objects.count(),
            "endpoint": endpoint,
            "is_local_model": not (settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY),
        },
    )


def signup(request: HttpRequest) -> HttpResponse:
    if not settings.CHAOSLM_SIGNUP:
        raise Http404("Sign-up is turned off on this site.")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def new_debate(request: HttpRequest) -> HttpResponse:
    format_name = request.POST.get("format") or request.GET.get("format") or "duel"
    form = NewDebateForm(request.POST or None, format_name=format_name)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        seats: dict[str, SeatChoice] = {}
        for spec in form.fmt.seat_specs:
            value = data.get(f"seat_{spec.key}")
            if spec.human_allowed:
                if value:
                    seats[spec.key] = SeatChoice(human_name=request.user.get_username())
            elif value is not None:
                seats[spec.key] = SeatChoice(persona=value)
        options = {o.name: data[f"option_{o.name}"] for o in form.fmt.option_specs}
        try:
            debate = create_debate(
                format_name=form.fmt.name,
                topic=data["topic"],
                premise=data["premise"],
                seats=seats,
                options=options,
                owner=request.user,
                visibility=data["visibility"],
            )
        except FormatError as error:
            form.add_error(None, str(error))
        else:
            runner.submit("debate", debate.pk)
            return redirect("debate_detail", debate.pk)
    context = {"form": form, "formats": FORMATS.values(), "selected": form.fmt}
    if request.htmx and request.method == "GET":
        return render(request, "debates/new_fields.html", context)
    return render(request, "debates/new.html", context)


@login_required
def persona_prompt(request: HttpRequest) -> HttpResponse:
    """The exact system prompt the chosen persona gets in a seat: the preview under each picker."""
    chosen = next((v for k, v in request.GET.items() if k.startswith("seat_")), "")
    persona = Persona.objects.filter(pk=chosen).first() if chosen.isdigit() else None
    if persona is None:
        return HttpResponse("")
    role = request.GET.get("role") or persona.role
    return render(request, "debates/prompt_preview.html", {"prompt": persona.spec().system_prompt(role)})


def _page(request: HttpRequest, debate: Debate, *, ws_url: str) -> HttpResponse:
    state = page_state(debate)
    share_url = request.build_absolute_uri(reverse("debate_share", args=[debate.share_token]))
    export = reverse("debate_share_export", args=[debate.share_token, "md"])
    if sharing.can_view(request.user, debate):
        export = reverse("debate_export", args=[debate.pk, "md"])
    return render(
        request,
        "debates/detail.html",
        {
            **state,
            "format_title": get_format(debate.format).title,
            "is_owner": sharing.is_owner(request.user, debate),
            "can_delete": sharing.can_delete(request.user, debate),
            "ws_url": ws_url,
            "share_url": share_url,
            "export_md": export,
            "export_json": export[: -len("md")] + "json",
            "visibility_choices": Debate.Visibility.choices,
        },
    )


def _visible_debate(request: HttpRequest, pk: int) -> Debate:
    return sharing.visible_or_404(Debate, request.user, pk=pk)


def debate_detail(request: HttpRequest, pk: int) -> HttpResponse:
    debate = _visible_debate(request, pk)
    return _page(request, debate, ws_url=f"/ws/debates/{debate.pk}/")


def debate_share(request: HttpRequest, token: str) -> HttpResponse:
    debate = sharing.visible_or_404(Debate, request.user, token=token)
    return _page(request, debate, ws_url=f"/ws/share/{token}/")


def _export(debate: Debate, kind: str) -> HttpResponse:
    if kind == "json":
        response = HttpResponse(transcripts.as_json(debate), content_type="application/json")
    else:
        response = HttpResponse(transcripts.as_markdown(debate), content_type="text/markdown; charset=utf-8")
    prefix = "partial-" if debate.status == Debate.Status.ERROR else "debate-"
    response["Content-Disposition"] = f'attachment; filename="{prefix}{debate.pk}.{kind}"'
    return response


def debate_export(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    return _export(_visible_debate(request, pk), kind)


def debate_share_export(request: HttpRequest, token: str, kind: str) -> HttpResponse:
    return _export(sharing.visible_or_404(Debate, request.user, token=token), kind)


_owner_action = sharing.owner_action(Debate)


def _push_state(debate: Debate) -> None:
    debate.refresh_from_db()
    live.push_sync(live.debate_group(debate.pk), live_parts_html(debate))


@_owner_action
def debate_end(request: HttpRequest, debate: Debate) -> HttpResponse:
    if debate.status == Debate.Status.COMPLETED:
        return HttpResponse(status=204)
    debate = end_debate(debate.pk)
    if debate.status != Debate.Status.RUNNING:
        runner.submit("debate", debate.pk)
    _push_state(debate)
    return HttpResponse(status=204)


@_owner_action
def debate_speak(request: HttpRequest, debate: Debate) -> HttpResponse:
    try:
        event = post_message(debate.pk, request.POST.get("text", ""))
    except FormatError as error:
        return HttpResponse(str(error), status=422 if request.htmx else 400)
    live.push_sync(live.debate_group(debate.pk), card_push(event))
    runner.submit("debate", debate.pk)
    _push_state(debate)
    if request.htmx:
        return HttpResponse("")
    return redirect("debate_detail", debate.pk)


@_owner_action
def debate_retry(request: HttpRequest, debate: Debate) -> HttpResponse:
    if debate.status in (Debate.Status.ERROR, Debate.Status.INTERRUPTED):
        runner.submit("debate", debate.pk)
    return HttpResponse(status=204)


@_owner_action
def debate_visibility(request: HttpRequest, debate: Debate) -> HttpResponse:
    value = request.POST.get("visibility", "")
    if value not in Debate.Visibility.values:
        return HttpResponse("Unknown visibility.", status=400)
    debate.visibility = value
    debate.save(update_fields=["visibility", "updated_at"])
    messages.success(request, f"This debate is now {debate.get_visibility_display()}.")
    return redirect("debate_detail", debate.pk)


@login_required
@require_POST
def debate_delete(request: HttpRequest, pk: int) -> HttpResponse:
    debate = _visible_debate(request, pk)
    if not sharing.can_delete(request.user, debate):
        return HttpResponseForbidden("Only the debate's owner can delete it.")
    debate.delete()
    messages.success(request, "Debate deleted.")
    return redirect("home")
