from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from debates import hold
from debates.models import Debate, Event, Seat
from debates.services import delete_debate


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
    # A debate's format and options are fixed when it starts (its transcript is its state, and the form
    # bounded each option); the admin shows them but does not change them.
    readonly_fields = [
        "format",
        "options",
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
