from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from debates import format_cards, hold
from debates.formats.card import CardError
from debates.models import Debate, Event, FormatCard, Seat
from debates.services import delete_debate
from personas.admin import MultipleFileField


class DebateAdminForm(forms.ModelForm):
    class Meta:
        model = Debate
        fields = ["starts_at"]  # the admin adds the rest of its fields

    def clean_starts_at(self) -> Any:
        when = self.cleaned_data.get("starts_at")
        try:
            hold.check_start_time(when)
        except hold.HoldError as error:
            raise forms.ValidationError(str(error)) from None
        return when


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ["key", "name", "role", "side", "is_human", "persona"]
    readonly_fields = fields
    can_delete = False


@admin.register(Debate)
class DebateAdmin(admin.ModelAdmin):
    form = DebateAdminForm
    list_display = ["id", "topic", "format", "status", "owner", "visibility", "created_at"]
    list_filter = ["format", "status", "visibility"]
    search_fields = ["topic", "premise"]
    inlines = [SeatInline]
    # A debate's format, options and material are fixed when it starts (its transcript is its state, its prompts
    # quote the material, and the form bounded each); the admin shows them but does not change them.
    readonly_fields = [
        "format",
        "options",
        "material",
        "share_token",
        "started_at",
        "finished_at",
        "winner",
        "scores",
        "premise_upheld",
        "announcement",
        "error_text",
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: Debate | None = None) -> list[str]:
        # The hold (debates/hold.py) may be set or moved until the debate starts; then it is history.
        started = obj is not None and obj.started_at is not None
        return [*self.readonly_fields, "starts_at"] if started else list(self.readonly_fields)

    def save_model(self, request: HttpRequest, obj: Debate, form: forms.ModelForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if change and "starts_at" in form.changed_data:
            hold.reschedule(obj)

    def delete_model(self, request: HttpRequest, obj: Debate) -> None:
        delete_debate(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Debate]) -> None:
        for debate in queryset:
            delete_debate(debate)


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["debate", "ordinal", "kind", "step", "seat", "tokens_in", "tokens_out", "latency_ms"]
    list_filter = ["kind"]
    list_select_related = ["seat"]


CARD_HELP = (
    "The card as YAML, the source of truth: its name, title, seats, stages, judge and options "
    "(docs/cards.md). Name and title below are read from it when you save; a card with any problem is "
    "refused with every problem listed, by line and field, and your text stays here to fix."
)


class FormatCardForm(forms.ModelForm):
    class Meta:
        model = FormatCard
        fields = ["yaml", "owner", "public"]
        help_texts = {"yaml": CARD_HELP}
        widgets = {
            "yaml": forms.Textarea(
                attrs={
                    "rows": 30,
                    "cols": 100,
                    "class": "vLargeTextField card-yaml",
                    "spellcheck": "false",
                }
            )
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Kept as written: the card's lines are what its problems name, and an export gives back the same text.
        self.fields["yaml"].strip = False

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        text = data.get("yaml")
        if text is None:
            return data
        owner = data.get("owner") if "owner" in data else self.instance.owner
        try:
            fmt = format_cards.check(text, owner=owner, card=self.instance)
        except CardError as error:
            self.add_error(
                "yaml",
                [f"line {p.line}" + (f", {p.field}" if p.field else "") + f": {p.message}" for p in error.problems],
            )
        else:
            format_cards.apply(self.instance, fmt, text)
        return data


class CardImportForm(forms.Form):
    files = MultipleFileField(label="Card YAML files")
    update = forms.BooleanField(required=False, label="Replace cards that have the same name", initial=False)


@admin.register(FormatCard)
class FormatCardAdmin(admin.ModelAdmin):
    form = FormatCardForm
    list_display = ["name", "title", "owner", "public", "updated_at"]
    list_filter = ["public"]
    search_fields = ["name", "title", "yaml"]
    readonly_fields = ["name", "title", "page_link"]
    fields = ["yaml", "owner", "public", *readonly_fields]
    raw_id_fields = ["owner"]
    actions = ["export_yaml"]
    change_list_template = "admin/debates/formatcard/change_list.html"

    class Media:
        css = {"all": ("css/admin.css",)}

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {"owner": request.user.pk}

    @admin.display(description="Its page")
    def page_link(self, obj: FormatCard) -> str:
        if not obj.pk:
            return "Save to see its plan."
        url = reverse("format_detail", args=[obj.name])
        return format_html('<a href="{}">{}</a> (its plan: every call in order)', url, url)

    @admin.action(description="Export selected cards as YAML")
    def export_yaml(self, request: HttpRequest, queryset: QuerySet[FormatCard]) -> HttpResponse:
        cards = list(queryset)
        if len(cards) != 1:
            # One card a file, as import_formats reads them: several go as a folder, by export_formats.
            self.message_user(
                request,
                "Export one card at a time (a card is one file); `manage.py export_formats` writes several.",
                messages.WARNING,
            )
            return redirect(reverse("admin:debates_formatcard_changelist"))
        response = HttpResponse(cards[0].yaml, content_type="application/yaml; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{format_cards.file_name(cards[0])}"'
        return response

    def get_urls(self) -> list[Any]:
        urls = [path("import/", self.admin_site.admin_view(self.import_view), name="debates_formatcard_import")]
        return urls + super().get_urls()

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            return HttpResponse(status=403)
        form = CardImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            limit = settings.CHAOSLM_CARD_MAX_BYTES
            files = [(f.name, f.read(limit + 1)) for f in form.cleaned_data["files"]]
            try:
                saved = format_cards.import_cards(files, owner=request.user, update=form.cleaned_data["update"])
            except format_cards.CardImportError as error:
                form.add_error("files", [str(p) for p in error.problems])
            else:
                names = ", ".join(c.name for c in saved)
                self.message_user(request, f"Imported {len(saved)} card(s): {names}.", messages.SUCCESS)
                return redirect(reverse("admin:debates_formatcard_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": "Import protocol cards from YAML",
        }
        return TemplateResponse(request, "admin/debates/formatcard/import.html", context)
