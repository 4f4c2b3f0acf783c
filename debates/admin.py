from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from debates.models import Debate, Event, Seat
from debates.services import delete_debate


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ["key", "name", "role", "side", "is_human", "persona"]
    readonly_fields = fields
    can_delete = False


@admin.register(Debate)
class DebateAdmin(admin.ModelAdmin):
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
