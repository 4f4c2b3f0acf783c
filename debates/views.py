"""Debate pages and actions. Plain function views: check access, call a plain module, render."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from chaoslm import costs, limits, sharing
from chaoslm.http import message_reply, parse_id
from chaoslm.llm import local_model
from chaoslm.llm.endpoints import default_endpoint
from debates import hold, poll_hooks, privacy, services, transcripts
from debates.formats import DEFAULT_FORMAT, LISTED, FormatError
from debates.forms import NewDebateForm
from debates.models import Debate
from debates.selectors import listed_mine, listed_public, page_state
from personas.models import Persona


def home(request: HttpRequest) -> HttpResponse:
    mine = listed_mine(request.user)
    page = Paginator(listed_public(request.user).select_related("owner"), 20).get_page(request.GET.get("page"))
    endpoint = default_endpoint()
    is_local_model = local_model.in_use()
    return render(
        request,
        "home.html",
        {
            "mine": mine[:50],
            "public_page": page,
            "persona_count": Persona.objects.count(),
            "endpoint": endpoint,
            "local_model": local_model.chosen() if is_local_model else None,
            "local_model_trouble": local_model.trouble() if is_local_model else None,
            "signup_open": settings.CHAOSLM_SIGNUP,
        },
    )


def local_model_status(request: HttpRequest) -> HttpResponse:
    """The home page's word on the embedded model, polled while it starts: how far along, and then that it is
    ready (or why not)."""
    if not local_model.in_use():
        raise Http404("No embedded model is in use.")
    return render(
        request,
        "local_model_status.html",
        {"local_model_trouble": local_model.trouble(), "ready": True, "took": local_model.last_start()},
    )


@login_required
def new_debate(request: HttpRequest) -> HttpResponse:
    format_name = request.POST.get("format") or request.GET.get("format") or DEFAULT_FORMAT
    form = NewDebateForm(request.POST or None, request.FILES or None, format_name=format_name, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            debate = services.start_debate(request.user, form)
        except (FormatError, limits.LimitReached, costs.OverBudget) as error:
            form.add_error(None, str(error))
        else:
            return redirect("debate_detail", debate.pk)
    context = {
        "form": form,
        "formats": [f for f in form.formats if f.name in LISTED],
        "cards": [f for f in form.formats if f.name not in LISTED],
        "selected": form.fmt,
        "card_chosen": form.fmt.name not in LISTED,
    }
    if request.htmx and request.method == "GET":
        return render(request, "debates/new_fields.html", context)
    return render(request, "debates/new.html", context)


@login_required
def persona_prompt(request: HttpRequest) -> HttpResponse:
    """The exact system prompt the chosen persona gets in a seat: the preview under each picker."""
    chosen = next((v for k, v in request.GET.items() if k.startswith("seat_")), "")
    persona_id = parse_id(chosen)
    persona = Persona.objects.filter(pk=persona_id).first() if persona_id is not None else None
    if persona is None:
        return HttpResponse("")
    role = request.GET.get("role") or persona.role
    return render(request, "debates/prompt_preview.html", {"prompt": persona.spec().system_prompt(role)})


def _replay_source_url(request: HttpRequest, debate: Debate) -> str:
    """A judge replay's link to the duel it judges, for a viewer who may open that duel."""
    source_id = debate.options.get("source_debate") if debate.fmt.replays_a_debate else None
    source = Debate.objects.filter(pk=source_id).first() if isinstance(source_id, int) else None
    if source is None or not sharing.can_view(request.user, source):
        return ""
    return reverse("debate_detail", args=[source.pk])


def _page(request: HttpRequest, debate: Debate, *, ws_url: str, via_share: bool = False) -> HttpResponse:
    access = privacy.access(request.user, debate, via_share=via_share)
    state = page_state(debate, thinking=access.thinking)
    fmt = debate.fmt
    export = reverse("debate_share_export", args=[debate.share_token, "md"])
    if sharing.can_view(request.user, debate):
        export = reverse("debate_export", args=[debate.pk, "md"])
    return render(
        request,
        "debates/detail.html",
        {
            **state,
            "format_title": fmt.title,
            "header_template": fmt.header_template,
            "is_owner": sharing.is_owner(request.user, debate),
            "can_delete": sharing.can_delete(request.user, debate),
            "ws_url": ws_url,
            "share": sharing.share_panel(request, debate),
            "export_md": export,
            "export_json": export[: -len("md")] + "json",
            # Every call's messages as sent: for those who read the prompts (the JSON export's ?messages=1).
            "export_messages": export[: -len("md")] + "json?messages=1" if access.prompts else "",
            "replay_source_url": _replay_source_url(request, debate),
            "poll_box": poll_hooks.poll().box_context(request, debate, via_share=via_share),
            "hold": hold.box(debate),
        },
    )


def _visible_debate(request: HttpRequest, pk: int) -> Debate:
    return sharing.visible_or_404(Debate, request.user, pk=pk)


def debate_detail(request: HttpRequest, pk: int) -> HttpResponse:
    debate = _visible_debate(request, pk)
    return _page(request, debate, ws_url=f"/ws/debates/{debate.pk}/")


def debate_share(request: HttpRequest, token: str) -> HttpResponse:
    debate = sharing.visible_or_404(Debate, request.user, token=token)
    return _page(request, debate, ws_url=f"/ws/share/{token}/", via_share=True)


EXPORTS: dict[str, tuple[Callable[..., str], str]] = {
    "md": (transcripts.as_markdown, "text/markdown; charset=utf-8"),
    "json": (transcripts.as_json, "application/json"),
}


def _export(request: HttpRequest, debate: Debate, kind: str, access: privacy.Access) -> HttpResponse:
    if kind not in EXPORTS:  # the URL pattern admits only these; never build a header from anything else
        raise Http404("No such export.")
    render_as, content_type = EXPORTS[kind]
    # ?messages=1 on the JSON export: every call's messages as sent, for those who may read the prompts.
    extra = {"messages": True} if kind == "json" and request.GET.get("messages") == "1" else {}
    response = HttpResponse(render_as(debate, access=access, **extra), content_type=content_type)
    prefix = "partial-" if debate.status == Debate.Status.ERROR else "debate-"
    response["Content-Disposition"] = f'attachment; filename="{prefix}{int(debate.pk)}.{kind}"'
    return response


def debate_export(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    """What the page shows its viewer (debates/privacy.py): everything, prompts included, for the owner and staff."""
    debate = _visible_debate(request, pk)
    return _export(request, debate, kind, privacy.access(request.user, debate))


def debate_share_export(request: HttpRequest, token: str, kind: str) -> HttpResponse:
    """What the share page shows, whoever asks: a share link is for passing on."""
    debate = sharing.visible_or_404(Debate, request.user, token=token)
    return _export(request, debate, kind, privacy.access(request.user, debate, via_share=True))


_owner_action = sharing.owner_action(Debate)


@_owner_action
def debate_end(request: HttpRequest, debate: Debate) -> HttpResponse:
    services.end(debate)
    return HttpResponse(status=204)


@_owner_action
def debate_start_now(request: HttpRequest, debate: Debate) -> HttpResponse:
    """The owner ends the hold: the debate starts at once."""
    if services.start_now(debate):
        messages.success(request, "The debate is starting now.")
    else:
        messages.info(request, "The debate was not held: it has started already.")
    return redirect("debate_detail", debate.pk)


@_owner_action
def debate_speak(request: HttpRequest, debate: Debate) -> HttpResponse:
    try:
        services.speak(request.user, debate, request.POST.get("text", ""))
    except (FormatError, limits.LimitReached) as error:
        return message_reply(str(error), 422 if request.htmx else 400)
    if request.htmx:
        return HttpResponse("")
    return redirect("debate_detail", debate.pk)


@_owner_action
def debate_retry(request: HttpRequest, debate: Debate) -> HttpResponse:
    try:
        services.retry(request.user, debate)
    except limits.LimitReached as error:
        return message_reply(str(error), 429)
    except costs.OverBudget as error:
        return message_reply(str(error), 402)
    return HttpResponse(status=204)


debate_visibility = sharing.visibility_view(Debate)
debate_share_reset = sharing.share_reset_view(Debate)


@_owner_action
def debate_thinking(request: HttpRequest, debate: Debate) -> HttpResponse:
    """The owner shows or hides the debaters' private thinking from other viewers; open pages follow."""
    services.show_thinking(debate, request.POST.get("show_thinking") == "on")
    shown = "Viewers see" if debate.show_thinking else "Only you (and staff) see"
    messages.success(request, f"{shown} the private thinking (plans and notes).")
    return redirect("debate_detail", debate.pk)


@login_required
@require_POST
def debate_delete(request: HttpRequest, pk: int) -> HttpResponse:
    debate = _visible_debate(request, pk)
    if not sharing.can_delete(request.user, debate):
        return HttpResponseForbidden("Only the debate's owner can delete it.")
    services.delete_debate(debate)
    messages.success(request, "Debate deleted.")
    return redirect("home")
