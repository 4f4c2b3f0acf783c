from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from rooms import work
from rooms.models import Room, RoomAgent, RoomMessage


class RoomAgentInline(admin.TabularInline):
    model = RoomAgent
    extra = 0
    fields = ["name", "role", "participating", "persona"]
    readonly_fields = ["name", "role", "persona"]


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "mode", "visibility", "updated_at"]
    list_filter = ["mode", "visibility"]
    search_fields = ["title"]
    inlines = [RoomAgentInline]

    def delete_model(self, request: HttpRequest, obj: Room) -> None:
        work.delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Room]) -> None:
        for room in queryset:
            work.delete(room)


@admin.register(RoomMessage)
class RoomMessageAdmin(admin.ModelAdmin):
    list_display = ["room", "kind", "author", "active", "created_at"]
    list_filter = ["kind", "active"]
